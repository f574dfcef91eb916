// FCL 0.7 mid-phase peer: triangle meshes as fcl::BVHModel<OBBRSSd> and
// fcl::BVHModel<AABBd> (double precision only). All FCL code of bench_mid
// lives in this one translation unit: FCL's headers cost ~9 s and ~450 MB.
//
// What each call costs inside FCL, since the timings depend on it:
// - Build: beginModel / addSubModel / endModel. endModel builds the tree
//   top-down with FCL's default splitter (split at the mean of the
//   primitives' centroids along the longest axis of the BV) and fits each
//   node (OBBRSS: an oriented box from the covariance of the node's
//   vertices, plus the rectangle-swept sphere).
// - Collide, OBBRSS: the oriented traversal. The relative transform is
//   computed once; node pairs are tested as OBBs under it and triangle pairs
//   by Intersect::intersect_Triangle after moving B's triangle into A's
//   frame. Nothing is copied.
// - Collide, AABB: FCL's generic path (BVHCollideImpl) copies both models,
//   moves every vertex of each non-identity model into the world frame and
//   rebuilds both trees from scratch (initialize() calls endReplaceModel
//   with refit off) before traversing: AABBs cannot be rotated. That is what
//   fcl::collide does for AABB meshes, so it is what is timed.
// - Refit: beginReplaceModel / replaceSubModel / endReplaceModel with refit
//   on, bottom up: each leaf's volume fitted to its triangle's new corners
//   (OBBRSS: the covariance fit, as in the build), each parent's merged
//   from its children's. The new vertices are widened to double before the
//   timed call.
// - Pairs: with enable_contact = false the leaf test is
//   Intersect::intersect_Triangle, a separating-axis test in double on 17
//   axes (the two normals, the nine edge-edge cross products, the six
//   in-plane edge normals; closed intervals, so touching counts), and the
//   contact carries the two primitive ids (Contact::b1, b2) = the
//   triangles' indices in the order addSubModel got them. FCL stops once
//   num_max_contacts contacts exist.
#include "peers_mid.h"

#include <cstdint>
#include <memory>
#include <new>
#include <vector>

#include <fcl/geometry/bvh/BVH_model.h>
#include <fcl/math/bv/AABB.h>
#include <fcl/math/bv/OBBRSS.h>
#include <fcl/narrowphase/collision.h>

namespace {

struct FclMesh {
    bench_fcl_bv bv;
    std::shared_ptr<fcl::CollisionGeometryd> geometry;
};

struct FclRefit {
    FclMesh* mesh;
    std::vector<std::vector<fcl::Vector3d>> frames;
};

template <typename BV>
int refit_model(fcl::CollisionGeometryd* g, const std::vector<fcl::Vector3d>& points)
{
    auto* model = static_cast<fcl::BVHModel<BV>*>(g);
    if (model->beginReplaceModel() != fcl::BVH_OK || model->replaceSubModel(points) != fcl::BVH_OK ||
        model->endReplaceModel(true, true) != fcl::BVH_OK) {
        return -1;
    }
    model->computeLocalAABB();
    return 0;
}

struct FclCollide {
    const FclMesh* a;
    const FclMesh* b;
    fcl::Transform3d tf_a, tf_b;
    fcl::CollisionResultd result; // reused: clear() keeps the contact vector's storage
};

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

template <typename BV>
std::shared_ptr<fcl::CollisionGeometryd> build_model(const bench_mesh* m)
{
    auto model = std::make_shared<fcl::BVHModel<BV>>();
    std::vector<fcl::Vector3d> points;
    std::vector<fcl::Triangle> triangles;
    points.reserve(static_cast<size_t>(m->vertex_count));
    triangles.reserve(static_cast<size_t>(m->triangle_count));
    for (int i = 0; i < m->vertex_count; i++) {
        points.emplace_back(m->vertices[3 * i], m->vertices[3 * i + 1], m->vertices[3 * i + 2]);
    }
    for (int i = 0; i < m->triangle_count; i++) {
        triangles.emplace_back(static_cast<size_t>(m->triangles[3 * i]),
                               static_cast<size_t>(m->triangles[3 * i + 1]),
                               static_cast<size_t>(m->triangles[3 * i + 2]));
    }
    if (model->beginModel(m->triangle_count, m->vertex_count) != fcl::BVH_OK ||
        model->addSubModel(points, triangles) != fcl::BVH_OK || model->endModel() != fcl::BVH_OK) {
        return nullptr;
    }
    model->computeLocalAABB();
    return model;
}

template <typename BV>
bench_tree_info model_info(const fcl::CollisionGeometryd* g)
{
    const auto* model = static_cast<const fcl::BVHModel<BV>*>(g);
    bench_tree_info info;
    info.node_count = model->getNumBVs();
    info.tree_bytes = static_cast<size_t>(model->getNumBVs()) * sizeof(fcl::BVNode<BV>);
    return info;
}

}  // namespace

extern "C" void* bench_fcl_mesh_build(const bench_mesh* mesh, bench_fcl_bv bv)
{
    try {
        auto* m = new FclMesh;
        m->bv = bv;
        if (bv == BENCH_FCL_OBBRSS) {
            m->geometry = build_model<fcl::OBBRSSd>(mesh);
        } else {
            m->geometry = build_model<fcl::AABBd>(mesh);
        }
        if (!m->geometry) {
            delete m;
            return nullptr;
        }
        return m;
    } catch (const std::exception&) {
        return nullptr;
    }
}

extern "C" bench_tree_info bench_fcl_mesh_info(const void* model)
{
    const auto* m = static_cast<const FclMesh*>(model);
    if (m->bv == BENCH_FCL_OBBRSS) {
        return model_info<fcl::OBBRSSd>(m->geometry.get());
    }
    return model_info<fcl::AABBd>(m->geometry.get());
}

extern "C" void bench_fcl_mesh_destroy(void* model)
{
    delete static_cast<FclMesh*>(model);
}

extern "C" void* bench_fcl_collide_prepare(const void* model_a, const bench_pose* pose_a,
                                           const void* model_b, const bench_pose* pose_b)
{
    const auto* a = static_cast<const FclMesh*>(model_a);
    const auto* b = static_cast<const FclMesh*>(model_b);
    if (a == nullptr || b == nullptr || a->bv != b->bv) {
        return nullptr;
    }
    try {
        auto* q = new FclCollide;
        q->a = a;
        q->b = b;
        q->tf_a = make_transform(*pose_a);
        q->tf_b = make_transform(*pose_b);
        return q;
    } catch (const std::exception&) {
        return nullptr;
    }
}

extern "C" int bench_fcl_collide(void* query, int first_only, bench_tri_pair* out, int capacity)
{
    auto* q = static_cast<FclCollide*>(query);
    // No contact details (points, normals, depth): the pair list only, which
    // is what carom's collide returns. The GJK solver type does not matter
    // for mesh-mesh pairs.
    fcl::CollisionRequestd request(first_only ? 1 : SIZE_MAX, false);
    q->result.clear();
    fcl::collide(q->a->geometry.get(), q->tf_a, q->b->geometry.get(), q->tf_b, request, q->result);
    const size_t n = q->result.numContacts();
    for (size_t i = 0; i < n && static_cast<int>(i) < capacity; i++) {
        const fcl::Contactd& c = q->result.getContact(i);
        out[i].a = static_cast<int>(c.b1);
        out[i].b = static_cast<int>(c.b2);
    }
    return static_cast<int>(n);
}

extern "C" void bench_fcl_collide_destroy(void* query)
{
    delete static_cast<FclCollide*>(query);
}

extern "C" void* bench_fcl_refit_prepare(void* model, const float* const* frames, int frame_count,
                                         int vertex_count)
{
    try {
        auto r = std::make_unique<FclRefit>();
        r->mesh = static_cast<FclMesh*>(model);
        const auto* g = r->mesh->geometry.get();
        int model_vertices;
        if (r->mesh->bv == BENCH_FCL_OBBRSS) {
            model_vertices = static_cast<const fcl::BVHModel<fcl::OBBRSSd>*>(g)->num_vertices;
        } else {
            model_vertices = static_cast<const fcl::BVHModel<fcl::AABBd>*>(g)->num_vertices;
        }
        if (model_vertices != vertex_count) {
            return nullptr;  // replaceSubModel would write past the model's vertices
        }
        r->frames.resize(static_cast<size_t>(frame_count));
        for (int f = 0; f < frame_count; f++) {
            const float* v = frames[f];
            r->frames[f].reserve(static_cast<size_t>(vertex_count));
            for (int i = 0; i < vertex_count; i++) {
                r->frames[f].emplace_back(v[3 * i], v[3 * i + 1], v[3 * i + 2]);
            }
        }
        return r.release();
    } catch (const std::exception&) {
        return nullptr;
    }
}

extern "C" int bench_fcl_refit(void* refit, int frame)
{
    auto* r = static_cast<FclRefit*>(refit);
    const auto& points = r->frames[static_cast<size_t>(frame)];
    if (r->mesh->bv == BENCH_FCL_OBBRSS) {
        return refit_model<fcl::OBBRSSd>(r->mesh->geometry.get(), points);
    }
    return refit_model<fcl::AABBd>(r->mesh->geometry.get(), points);
}

extern "C" void bench_fcl_refit_destroy(void* refit)
{
    delete static_cast<FclRefit*>(refit);
}
