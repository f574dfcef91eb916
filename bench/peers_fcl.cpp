// FCL 0.7 peer (double precision only). All FCL code lives in this one
// translation unit: compiling FCL's headers costs ~9 s and ~450 MB.
//
// Queries go through the geometry-level entry points
// fcl::distance(geometry, transform, geometry, transform, ...) and
// fcl::collide(...), so no CollisionObject (and no AABB update) sits in the
// timed loop. Both use GST_LIBCCD: signed distance with GST_INDEP aborts in
// Debian's build (assertions on), and libccd is FCL's default anyway.
//
// Shapes: fcl::Boxd takes full side lengths; fcl::Capsuled(radius, lz) is
// centred with its axis along z and lz the segment length; fcl::Convexd
// takes the hull's polygon faces, which lets it find support points by
// walking vertex adjacency on hulls of more than 32 vertices.
#include "peers.h"

#include <memory>
#include <new>
#include <vector>

#include <fcl/geometry/shape/box.h>
#include <fcl/geometry/shape/capsule.h>
#include <fcl/geometry/shape/convex.h>
#include <fcl/narrowphase/collision.h>
#include <fcl/narrowphase/distance.h>

namespace {

struct FclContext {
    std::shared_ptr<fcl::CollisionGeometryd> a, b;
    std::vector<fcl::Transform3d> tf_a, tf_b;
};

std::shared_ptr<fcl::CollisionGeometryd> make_shape(const bench_shape* s)
{
    std::shared_ptr<fcl::CollisionGeometryd> g;
    switch (s->kind) {
    case BENCH_SHAPE_BOX:
        g = std::make_shared<fcl::Boxd>(2.0 * s->half_extents[0], 2.0 * s->half_extents[1],
                                        2.0 * s->half_extents[2]);
        break;
    case BENCH_SHAPE_CAPSULE:
        g = std::make_shared<fcl::Capsuled>(s->radius, 2.0 * s->half_height);
        break;
    case BENCH_SHAPE_HULL: {
        auto verts = std::make_shared<std::vector<fcl::Vector3d>>();
        verts->reserve(static_cast<size_t>(s->point_count));
        for (int i = 0; i < s->point_count; i++) {
            verts->emplace_back(s->points[3 * i], s->points[3 * i + 1], s->points[3 * i + 2]);
        }
        // FCL's face encoding: count, then the indices, per face.
        auto faces = std::make_shared<std::vector<int>>();
        for (int f = 0; f < s->face_count; f++) {
            int first = s->face_first[f], last = s->face_first[f + 1];
            faces->push_back(last - first);
            for (int k = first; k < last; k++) {
                faces->push_back(s->face_vertices[k]);
            }
        }
        g = std::make_shared<fcl::Convexd>(verts, s->face_count, faces, true);
        break;
    }
    }
    if (g) {
        g->computeLocalAABB();
    }
    return g;
}

fcl::Transform3d make_transform(const bench_pose& p)
{
    fcl::Transform3d tf = fcl::Transform3d::Identity();
    // Eigen's quaternion constructor takes (w, x, y, z).
    fcl::Quaterniond q(p.q[3], p.q[0], p.q[1], p.q[2]);
    q.normalize();
    tf.linear() = q.toRotationMatrix();
    tf.translation() = fcl::Vector3d(p.p[0], p.p[1], p.p[2]);
    return tf;
}

}  // namespace

extern "C" void* bench_fcl_prepare(const bench_pairs* pairs)
{
    try {
        auto* c = new FclContext;
        c->a = make_shape(pairs->a);
        c->b = make_shape(pairs->b);
        if (!c->a || !c->b) {
            delete c;
            return nullptr;
        }
        c->tf_a.reserve(static_cast<size_t>(pairs->n));
        c->tf_b.reserve(static_cast<size_t>(pairs->n));
        for (int i = 0; i < pairs->n; i++) {
            c->tf_a.push_back(make_transform(pairs->pose_a[i]));
            c->tf_b.push_back(make_transform(pairs->pose_b[i]));
        }
        return c;
    } catch (const std::exception&) {
        return nullptr;
    }
}

extern "C" void bench_fcl_distance(void* ctx, bench_distance* out)
{
    auto* c = static_cast<FclContext*>(ctx);
    // Nearest points on, unsigned (overlap reports -1), default tolerance
    // (1e-6 absolute), libccd solver.
    fcl::DistanceRequestd request(true, false, 0.0, 0.0, 1e-6, fcl::GST_LIBCCD);
    const size_t n = c->tf_a.size();
    for (size_t i = 0; i < n; i++) {
        fcl::DistanceResultd result;
        double d = fcl::distance(c->a.get(), c->tf_a[i], c->b.get(), c->tf_b[i], request, result);
        out[i].distance = d;
        for (int k = 0; k < 3; k++) {
            out[i].point_a[k] = result.nearest_points[0][k];
            out[i].point_b[k] = result.nearest_points[1][k];
        }
    }
}

extern "C" void bench_fcl_intersect(void* ctx, unsigned char* out)
{
    auto* c = static_cast<FclContext*>(ctx);
    // One contact wanted, no contact details (no EPA), libccd solver.
    fcl::CollisionRequestd request(1, false, 1, false, true, fcl::GST_LIBCCD);
    const size_t n = c->tf_a.size();
    for (size_t i = 0; i < n; i++) {
        fcl::CollisionResultd result;
        fcl::collide(c->a.get(), c->tf_a[i], c->b.get(), c->tf_b[i], request, result);
        out[i] = result.isCollision() ? 1 : 0;
    }
}

extern "C" void bench_fcl_destroy(void* ctx)
{
    delete static_cast<FclContext*>(ctx);
}
