// Bullet 3.24 peer (Debian's float build; never define BT_USE_DOUBLE_PRECISION
// against it).
//
// Margins: Bullet rounds shapes by a collision margin. btBoxShape keeps its
// margin inside the given half extents and btConvexHullShape puts it outside
// the points; both get setMargin(0) so that they are the exact shapes. A
// btCapsuleShape's margin is its radius (setMargin is a no-op): its core is
// the segment, and both solvers below handle the radius as a margin.
//
// Implementations:
//   bullet-gjk   btGjkPairDetector + btVoronoiSimplexSolver (the classic
//                Bullet GJK). Distance: no penetration solver, maximum
//                distance unbounded. Intersection: a
//                btGjkEpaPenetrationDepthSolver is attached, as Bullet's
//                convex-convex algorithm does, and m_maximumDistanceSquared is
//                set to the squared sum of the margins, so GJK stops at the
//                first separating axis; overlap = a contact point with
//                distance <= 0 was reported. Overlapping pairs therefore pay
//                for EPA: Bullet has no cheaper boolean query on this path.
//   bullet-epa2  btGjkEpaSolver2 (Presson's GJK). Distance: Distance(), which
//                works on the cores, minus the margins. Intersection: the sign
//                of the same call: Distance() returns false when GJK encloses
//                the origin (or fails), else overlap = core distance <= the
//                sum of the margins. No EPA. Its float GJK treats core
//                distances below 1e-4 as touching (GJK_MIN_DISTANCE).
#include "peers.h"

#include <new>
#include <vector>

#include <BulletCollision/CollisionShapes/btBoxShape.h>
#include <BulletCollision/CollisionShapes/btCapsuleShape.h>
#include <BulletCollision/CollisionShapes/btConvexHullShape.h>
#include <BulletCollision/NarrowPhaseCollision/btGjkEpa2.h>
#include <BulletCollision/NarrowPhaseCollision/btGjkEpaPenetrationDepthSolver.h>
#include <BulletCollision/NarrowPhaseCollision/btGjkPairDetector.h>
#include <BulletCollision/NarrowPhaseCollision/btVoronoiSimplexSolver.h>

namespace {

struct BulletContext {
    btConvexShape* a = nullptr;
    btConvexShape* b = nullptr;
    btAlignedObjectArray<btTransform> tf_a, tf_b;
    ~BulletContext()
    {
        delete a;
        delete b;
    }
};

btConvexShape* make_shape(const bench_shape* s)
{
    switch (s->kind) {
    case BENCH_SHAPE_BOX: {
        auto* box = new btBoxShape(btVector3(s->half_extents[0], s->half_extents[1], s->half_extents[2]));
        // The margin is inside the box: setMargin(0) keeps the outer size.
        box->setMargin(0);
        return box;
    }
    case BENCH_SHAPE_CAPSULE:
        // Axis z, centred; the height argument is the segment length.
        return new btCapsuleShapeZ(s->radius, 2.0f * s->half_height);
    case BENCH_SHAPE_HULL: {
        auto* hull = new btConvexHullShape(s->points, s->point_count, 3 * sizeof(float));
        hull->setMargin(0);
        return hull;
    }
    }
    return nullptr;
}

btTransform make_transform(const bench_pose& p)
{
    btQuaternion q(p.q[0], p.q[1], p.q[2], p.q[3]);
    q.normalize();
    return btTransform(q, btVector3(p.p[0], p.p[1], p.p[2]));
}

// Keeps the deepest (smallest distance) contact the detector reports.
struct ClosestResult : public btDiscreteCollisionDetectorInterface::Result {
    bool has = false;
    btVector3 normal_on_b{0, 0, 0};
    btVector3 point_on_b{0, 0, 0};
    btScalar distance = 0;
    void setShapeIdentifiersA(int, int) override {}
    void setShapeIdentifiersB(int, int) override {}
    void addContactPoint(const btVector3& normal, const btVector3& point, btScalar depth) override
    {
        if (!has || depth < distance) {
            has = true;
            normal_on_b = normal;
            point_on_b = point;
            distance = depth;
        }
    }
};

}  // namespace

extern "C" void* bench_bullet_prepare(const bench_pairs* pairs)
{
    auto* c = new (std::nothrow) BulletContext;
    if (c == nullptr) {
        return nullptr;
    }
    c->a = make_shape(pairs->a);
    c->b = make_shape(pairs->b);
    if (c->a == nullptr || c->b == nullptr) {
        delete c;
        return nullptr;
    }
    c->tf_a.reserve(pairs->n);
    c->tf_b.reserve(pairs->n);
    for (int i = 0; i < pairs->n; i++) {
        c->tf_a.push_back(make_transform(pairs->pose_a[i]));
        c->tf_b.push_back(make_transform(pairs->pose_b[i]));
    }
    return c;
}

extern "C" void bench_bullet_gjk_distance(void* ctx, bench_distance* out)
{
    auto* c = static_cast<BulletContext*>(ctx);
    btVoronoiSimplexSolver simplex;
    btGjkPairDetector gjk(c->a, c->b, &simplex, nullptr);
    btGjkPairDetector::ClosestPointInput input;
    input.m_maximumDistanceSquared = BT_LARGE_FLOAT;
    const int n = c->tf_a.size();
    for (int i = 0; i < n; i++) {
        input.m_transformA = c->tf_a[i];
        input.m_transformB = c->tf_b[i];
        ClosestResult r;
        gjk.getClosestPoints(input, r, nullptr);
        if (r.has) {
            // The normal points from B to A; A's point is B's moved along it.
            btVector3 pa = r.point_on_b + r.normal_on_b * r.distance;
            out[i].distance = r.distance;
            for (int k = 0; k < 3; k++) {
                out[i].point_a[k] = pa[k];
                out[i].point_b[k] = r.point_on_b[k];
            }
        } else {
            // No result without a penetration solver means GJK found overlap.
            out[i] = bench_distance{};
        }
    }
}

extern "C" void bench_bullet_gjk_intersect(void* ctx, unsigned char* out)
{
    auto* c = static_cast<BulletContext*>(ctx);
    btVoronoiSimplexSolver simplex;
    btGjkEpaPenetrationDepthSolver epa;
    btGjkPairDetector gjk(c->a, c->b, &simplex, &epa);
    btGjkPairDetector::ClosestPointInput input;
    const btScalar margin = c->a->getMargin() + c->b->getMargin();
    input.m_maximumDistanceSquared = margin * margin;
    const int n = c->tf_a.size();
    for (int i = 0; i < n; i++) {
        input.m_transformA = c->tf_a[i];
        input.m_transformB = c->tf_b[i];
        ClosestResult r;
        gjk.getClosestPoints(input, r, nullptr);
        out[i] = (r.has && r.distance <= 0) ? 1 : 0;
    }
}

extern "C" void bench_bullet_epa2_distance(void* ctx, bench_distance* out)
{
    auto* c = static_cast<BulletContext*>(ctx);
    const btScalar margin_a = c->a->getMargin(), margin_b = c->b->getMargin();
    const btVector3 guess(1, 0, 0);
    const int n = c->tf_a.size();
    for (int i = 0; i < n; i++) {
        btGjkEpaSolver2::sResults r;
        if (btGjkEpaSolver2::Distance(c->a, c->tf_a[i], c->b, c->tf_b[i], guess, r)) {
            // Distance() ignores margins: the witnesses are on the cores.
            btVector3 w0 = r.witnesses[0], w1 = r.witnesses[1];
            btVector3 axis = w1 - w0;
            btScalar len = axis.length();
            if (len > 0) {
                axis /= len;
            }
            btVector3 pa = w0 + axis * margin_a, pb = w1 - axis * margin_b;
            out[i].distance = r.distance - margin_a - margin_b;
            for (int k = 0; k < 3; k++) {
                out[i].point_a[k] = pa[k];
                out[i].point_b[k] = pb[k];
            }
        } else {
            out[i] = bench_distance{};
        }
    }
}

extern "C" void bench_bullet_epa2_intersect(void* ctx, unsigned char* out)
{
    auto* c = static_cast<BulletContext*>(ctx);
    const btScalar margin = c->a->getMargin() + c->b->getMargin();
    const btVector3 guess(1, 0, 0);
    const int n = c->tf_a.size();
    for (int i = 0; i < n; i++) {
        btGjkEpaSolver2::sResults r;
        bool separated_cores = btGjkEpaSolver2::Distance(c->a, c->tf_a[i], c->b, c->tf_b[i], guess, r);
        out[i] = (!separated_cores || r.distance <= margin) ? 1 : 0;
    }
}

extern "C" void bench_bullet_destroy(void* ctx)
{
    delete static_cast<BulletContext*>(ctx);
}
