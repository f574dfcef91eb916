// Bullet 3.24 mid-phase peer (Debian's float build; never define
// BT_USE_DOUBLE_PRECISION against it): a btBvhTriangleMeshShape with
// quantized AABB compression, and closest-hit ray casts through it.
//
// - Build: btTriangleIndexVertexArray over our own copies of the arrays,
//   then the btBvhTriangleMeshShape constructor, which builds its
//   btOptimizedBvh (quantized 16-bit boxes, 16 bytes per node, split at the
//   mean of the centroids along the axis of largest variance, subtrees laid
//   out for cache-friendly stackless traversal).
// - Ray cast: performRaycast walks the quantized tree against the segment
//   (stackless; the segment is not shortened as hits come in) and hands
//   every triangle whose box it crosses to a btTriangleRaycastCallback.
//   Ours keeps the closest hit: reportHit returns the new fraction, which
//   the callback stores in m_hitFraction and uses to reject farther
//   triangles. Flags kF_None: back faces are not filtered, so both sides of
//   a triangle count, as in carom. Bullet's triangle test rejects a segment
//   that starts or ends on the triangle's plane (dist_a * dist_b >= 0) and
//   accepts points slightly outside an edge (tolerance 1e-4 relative to the
//   squared normal length), so grazing rays may differ from carom's.
// - Refit: the new vertices written into the array the mesh interface
//   reads, their bounds taken, then refitTree over them: btOptimizedBvh's
//   refit redoes the quantization over the bounds (with its default margin,
//   as the build) and refits every node bottom up from the triangles.
// - The shape has no pose: each cast moves its ray into the mesh's frame
//   with the inverse pose (computed once in prepare), as a user of the
//   shape outside a btCollisionWorld would.
#include "peers_mid.h"

#include <memory>
#include <new>
#include <vector>

#include <BulletCollision/CollisionShapes/btBvhTriangleMeshShape.h>
#include <BulletCollision/CollisionShapes/btOptimizedBvh.h>
#include <BulletCollision/CollisionShapes/btTriangleIndexVertexArray.h>
#include <BulletCollision/NarrowPhaseCollision/btRaycastCallback.h>
#include <LinearMath/btTransform.h>

namespace {

struct BulletMesh {
    std::vector<float> vertices;
    std::vector<int> indices;
    btTriangleIndexVertexArray* array = nullptr;
    btBvhTriangleMeshShape* shape = nullptr;
    ~BulletMesh()
    {
        delete shape;
        delete array;
    }
};

struct BulletRefit {
    BulletMesh* mesh;
    std::vector<std::vector<float>> frames;
};

struct BulletRays {
    btBvhTriangleMeshShape* shape;
    btTransform to_local; // inverse of the mesh's pose
    std::vector<bench_ray> rays;
};

// Closest hit: returning the hit's fraction makes the base class reject
// every later triangle that is not nearer.
class ClosestCallback : public btTriangleRaycastCallback {
public:
    int triangle = -1;

    ClosestCallback(const btVector3& from, const btVector3& to)
        : btTriangleRaycastCallback(from, to, kF_None)
    {
    }

    btScalar reportHit(const btVector3& normal, btScalar fraction, int part, int index) override
    {
        (void)normal;
        (void)part;
        triangle = index;
        return fraction;
    }
};

}  // namespace

extern "C" void* bench_bullet_mesh_build(const bench_mesh* mesh)
{
    try {
        auto* m = new BulletMesh;
        m->vertices.assign(mesh->vertices, mesh->vertices + 3 * static_cast<size_t>(mesh->vertex_count));
        m->indices.assign(mesh->triangles,
                          mesh->triangles + 3 * static_cast<size_t>(mesh->triangle_count));
        m->array = new btTriangleIndexVertexArray(mesh->triangle_count, m->indices.data(),
                                                  3 * static_cast<int>(sizeof(int)),
                                                  mesh->vertex_count, m->vertices.data(),
                                                  3 * static_cast<int>(sizeof(float)));
        m->shape = new btBvhTriangleMeshShape(m->array, true, true);
        return m;
    } catch (const std::exception&) {
        return nullptr;
    }
}

extern "C" bench_tree_info bench_bullet_mesh_info(const void* shape)
{
    const auto* m = static_cast<const BulletMesh*>(shape);
    btOptimizedBvh* bvh = m->shape->getOptimizedBvh();
    bench_tree_info info;
    // The contiguous node array is sized 2 * leaves up front and the tree
    // uses all but one of them; the leaf array the build starts from is
    // emptied by then (counted anyway, should a version keep it).
    const int nodes = bvh->getQuantizedNodeArray().size();
    const int leaves = bvh->getLeafNodeArray().size();
    const int subtrees = bvh->getSubtreeInfoArray().size();
    info.node_count = nodes > 0 ? nodes - 1 : 0;
    info.tree_bytes = static_cast<size_t>(nodes + leaves) * sizeof(btQuantizedBvhNode) +
                      static_cast<size_t>(subtrees) * sizeof(btBvhSubtreeInfo);
    return info;
}

extern "C" void bench_bullet_mesh_destroy(void* shape)
{
    delete static_cast<BulletMesh*>(shape);
}

extern "C" void* bench_bullet_raycast_prepare(const void* shape, const bench_pose* pose,
                                              const bench_ray* rays, int count)
{
    try {
        auto* r = new BulletRays;
        r->shape = static_cast<const BulletMesh*>(shape)->shape;
        btQuaternion q(pose->q[0], pose->q[1], pose->q[2], pose->q[3]);
        q.normalize();
        r->to_local = btTransform(q, btVector3(pose->p[0], pose->p[1], pose->p[2])).inverse();
        r->rays.assign(rays, rays + count);
        return r;
    } catch (const std::exception&) {
        return nullptr;
    }
}

extern "C" void bench_bullet_raycast(void* query, bench_ray_hit* out)
{
    auto* r = static_cast<BulletRays*>(query);
    const size_t n = r->rays.size();
    for (size_t i = 0; i < n; i++) {
        const bench_ray& ray = r->rays[i];
        const btVector3 o(ray.origin[0], ray.origin[1], ray.origin[2]);
        const btVector3 d(ray.translation[0], ray.translation[1], ray.translation[2]);
        const btVector3 from = r->to_local(o);
        const btVector3 to = r->to_local(o + d);
        ClosestCallback cb(from, to);
        r->shape->performRaycast(&cb, from, to);
        out[i].hit = cb.triangle >= 0;
        out[i].triangle = cb.triangle;
        out[i].fraction = cb.triangle >= 0 ? cb.m_hitFraction : 1.0f;
    }
}

extern "C" void bench_bullet_raycast_destroy(void* query)
{
    delete static_cast<BulletRays*>(query);
}

extern "C" void* bench_bullet_refit_prepare(void* shape, const float* const* frames,
                                            int frame_count, int vertex_count)
{
    try {
        auto r = std::make_unique<BulletRefit>();
        r->mesh = static_cast<BulletMesh*>(shape);
        if (r->mesh->vertices.size() != 3 * static_cast<size_t>(vertex_count)) {
            return nullptr;
        }
        for (int f = 0; f < frame_count; f++) {
            r->frames.emplace_back(frames[f], frames[f] + 3 * static_cast<size_t>(vertex_count));
        }
        return r.release();
    } catch (const std::exception&) {
        return nullptr;
    }
}

extern "C" void bench_bullet_refit(void* refit, int frame)
{
    auto* r = static_cast<BulletRefit*>(refit);
    const std::vector<float>& v = r->frames[static_cast<size_t>(frame)];
    std::vector<float>& out = r->mesh->vertices;  // what the mesh interface reads
    btVector3 lo(BT_LARGE_FLOAT, BT_LARGE_FLOAT, BT_LARGE_FLOAT), hi = -lo;
    for (size_t i = 0; i < v.size(); i += 3) {
        const btVector3 p(v[i], v[i + 1], v[i + 2]);
        out[i] = v[i], out[i + 1] = v[i + 1], out[i + 2] = v[i + 2];
        lo.setMin(p);
        hi.setMax(p);
    }
    r->mesh->shape->refitTree(lo, hi);
}

extern "C" void bench_bullet_refit_destroy(void* refit)
{
    delete static_cast<BulletRefit*>(refit);
}
