// geomkit: circles and a template helper.
template <typename T>
T clamp_to(T value, T low, T high) {
    return value < low ? low : (value > high ? high : value);
}

double circle_area(double radius) {
    const double pi = 3.14159265358979323846;
    double r = clamp_to(radius, 0.0, 1.0e6);
    return pi * r * r;
}

int ring_count(int inner, int outer) {
    int count = 0;
    for (int r = inner; r <= outer; ++r) {
        if (r % 2 == 0) {
            count += clamp_to(r, 0, 100);
        }
    }
    return count;
}
