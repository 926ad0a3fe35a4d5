// geomkit: shapes with areas and a registry.
#include <vector>

namespace geom {

struct Point {
    double x;
    double y;
};

class Polygon {
public:
    explicit Polygon(std::vector<Point> pts) : points(pts) {}

    // Shoelace formula.
    double area() const {
        double twice = 0.0;
        for (std::size_t i = 0; i < points.size(); ++i) {
            const Point &a = points[i];
            const Point &b = points[(i + 1) % points.size()];
            twice += a.x * b.y - b.x * a.y;
        }
        return twice < 0 ? -twice / 2.0 : twice / 2.0;
    }

private:
    std::vector<Point> points;
};

} // namespace geom

double unit_square_area() {
    geom::Polygon square({{0, 0}, {1, 0}, {1, 1}, {0, 1}});
    return square.area();
}
