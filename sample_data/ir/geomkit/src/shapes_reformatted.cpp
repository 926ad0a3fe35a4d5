/*
 * The same code as shapes.cpp, reformatted, with other comments and
 * other local variable and parameter names: it must dedup with shapes.cpp.
 */
#include <vector>

namespace geom {
struct Point { double x; double y; };

class Polygon {
public:
    explicit Polygon(std::vector<Point> corners) : points(corners) {}
    double area() const
    {
        double acc = 0.0;
        for (std::size_t j = 0; j < points.size(); ++j)
        {
            const Point &p = points[j], &q = points[(j + 1) % points.size()];
            acc += p.x * q.y - q.x * p.y;
        }
        return acc < 0 ? -acc / 2.0 : acc / 2.0;
    }
private:
    std::vector<Point> points;
};
}

double unit_square_area()
{
    geom::Polygon sq({{0, 0}, {1, 0}, {1, 1}, {0, 1}});
    return sq.area();
}
