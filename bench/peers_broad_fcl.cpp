// FCL 0.7 broad-phase peer (double precision only): the dynamic AABB tree,
// sweep and prune and spatial hashing collision managers over one
// CollisionObject per box. All FCL code of bench "broad" lives in this one
// translation unit: FCL's headers cost ~9 s and ~450 MB.
//
// What each manager does, since the timings depend on it:
// - DynamicAABBTreeCollisionManager: a pointer-linked binary tree of the
//   objects' AABBs (no margin of its own). update(objects) removes and reinserts
//   every moved leaf whose new box is not inside its old one; update() (all
//   moved) copies every AABB into its leaf and refits the whole tree
//   bottom-up. Both end with setup(): an incremental rebalance of 10 passes,
//   or a top-down rebuild once the tree is more than 10 levels taller than
//   log2(n). collide() is a recursive tree-against-itself traversal whose
//   leaf test is the inclusive overlap of the objects' AABBs: exact pairs
//   but for the pad below, which the callback's test takes off.
// - SaPCollisionManager: three doubly linked endpoint lists plus a
//   std::list of overlapping pairs, kept up to date by update(): each moved
//   endpoint walks its list, adding (after a linear duplicate search) or
//   removing pairs as it passes other endpoints. collide() walks the pair
//   list. Equal endpoints do not swap, so boxes that only touch can be
//   missed (the pad below avoids exact ties).
// - SpatialHashingCollisionManager: each object is listed in every grid
//   cell its AABB spans (cells hashed into a fixed bucket array; boxes
//   partly or wholly outside the scene limits also go to side lists).
//   update(objects) removes and reinserts the moved ones; update() clears
//   and refills the table. collide() queries, for each object, the buckets
//   of its cells (collecting them in a std::set) and reports every object
//   found with a higher address: any two objects sharing a bucket, so the
//   exact test in the callback is what turns candidates into pairs. Cells
//   are half-open along each axis, so two boxes that only touch on a cell
//   boundary share no cell (the pad below gives them one).
//
// Objects: FCL computes an object's AABB from its geometry and transform,
// so each box is an fcl::Boxd translated to the box's centre (in double),
// and a frame only moves the objects (setTranslation, computeAABB), as a
// user of rigid objects would. The geometry's sides are the box's extents
// plus 2 * pad, pad = 2^-17 times the largest coordinate magnitude of the
// scene (64 float ulps there), fixed at creation:
// - boxes translated in float keep their extents only up to rounding; the
//   pad keeps every object's AABB around its current float box anyway, so
//   the managers' candidates include every true pair and the exact filter
//   does the rest (a box that still outgrows its object, i.e. really
//   changed size, gets resized geometry, see update);
// - FCL's SaP cannot resize an interval: update_ relinks an endpoint to
//   itself (a cycle: the next walk never ends) unless min and max move the
//   same way on every axis, and an unchanged min skips the axis, max
//   included. Rigid translations of a fixed geometry always move both ways
//   alike. (Its unregisterObject dereferences an erased list iterator, so a
//   resized box makes the SaP peer rebuild the manager instead.)
// - touching boxes overlap by 2 * pad as objects, so SaP's ties between
//   equal endpoints and the spatial hash's half-open cells cannot drop
//   them; without the pad both miss touching pairs.
#include "peers_broad.h"

#include <cmath>
#include <cstdint>
#include <list>
#include <memory>
#include <new>
#include <vector>

#include <fcl/broadphase/broadphase_SaP.h>
#include <fcl/broadphase/broadphase_dynamic_AABB_tree.h>
#include <fcl/broadphase/broadphase_spatialhash.h>
#include <fcl/geometry/shape/box.h>
#include <fcl/narrowphase/collision_object.h>

namespace {

using SpatialHash = fcl::SpatialHashingCollisionManager<double>;

// The SaP manager's containers are protected; a subclass reads their sizes
// for the memory estimate and changes nothing else.
class SapManager : public fcl::SaPCollisionManagerd {
public:
    size_t structure_bytes() const
    {
        const size_t n = AABB_arr.size();
        // Per object: its interval record and two endpoints (heap nodes),
        // its std::list node (two links + pointer) and std::map node (four
        // words of links and colour + key + value).
        size_t bytes = n * (sizeof(SaPAABB) + 2 * sizeof(EndPoint));
        bytes += n * (2 * sizeof(void*) + sizeof(SaPAABB*));
        bytes += n * (4 * sizeof(void*) + sizeof(fcl::CollisionObjectd*) + sizeof(SaPAABB*));
        for (const auto& v : velist) {
            bytes += v.capacity() * sizeof(EndPoint*);
        }
        bytes += overlap_pairs.size() * (2 * sizeof(void*) + sizeof(SaPPair));
        return bytes;
    }
};

int object_id(const fcl::CollisionObjectd* o)
{
    return static_cast<int>(reinterpret_cast<intptr_t>(o->getUserData()));
}

// What the pair callback needs: the current float boxes and the output.
struct Collect {
    const float* boxes;
    int* out;
    int capacity;
    int count;
};

bool boxes_overlap(const float* a, const float* b)
{
    return a[0] <= b[3] && b[0] <= a[3] && a[1] <= b[4] && b[1] <= a[4] && a[2] <= b[5] &&
           b[2] <= a[5];
}

bool collect_pair(fcl::CollisionObjectd* o1, fcl::CollisionObjectd* o2, void* data)
{
    auto* c = static_cast<Collect*>(data);
    int a = object_id(o1);
    int b = object_id(o2);
    if (!boxes_overlap(c->boxes + 6 * a, c->boxes + 6 * b)) {
        return false;
    }
    if (a > b) {
        const int t = a;
        a = b;
        b = t;
    }
    if (c->count < c->capacity) {
        c->out[2 * c->count] = a;
        c->out[2 * c->count + 1] = b;
    }
    c->count++;
    return false; // keep going: every pair is wanted
}

// Whether an object's AABB contains the float box.
bool contains(const fcl::AABBd& aabb, const float* box)
{
    for (int k = 0; k < 3; k++) {
        if (!(aabb.min_[k] <= box[k] && box[3 + k] <= aabb.max_[k])) {
            return false;
        }
    }
    return true;
}

// Grid cells FCL's spatial hash lists an AABB under (the arithmetic of
// fcl::detail::SpatialHash, after the manager clips the AABB to the scene
// limits). For the memory estimate.
size_t hash_cells(const fcl::AABBd& aabb, const fcl::AABBd& limits, double cell)
{
    fcl::AABBd clipped;
    if (!limits.overlap(aabb, clipped)) {
        return 0;
    }
    size_t cells = 1;
    for (int k = 0; k < 3; k++) {
        const double first = std::floor((clipped.min_[k] - limits.min_[k]) / cell);
        const double last = std::ceil((clipped.max_[k] - limits.min_[k]) / cell);
        cells *= last > first ? static_cast<size_t>(last - first) : 0;
    }
    return cells;
}

}  // namespace

struct bench_broad_fcl {
    bench_broad_fcl_kind kind = BENCH_BROAD_FCL_DYNAMIC_TREE;
    int n = 0;
    double pad = 0; // added to each side of every object (see the top)
    std::vector<float> boxes; // current boxes, for the exact filter
    std::vector<fcl::Boxd*> shapes; // owned by the objects (shared_ptr)
    std::vector<std::unique_ptr<fcl::CollisionObjectd>> objects;
    std::vector<fcl::CollisionObjectd*> all; // registration order = id order
    std::vector<fcl::CollisionObjectd*> moved; // reused by every update
    std::unique_ptr<fcl::BroadPhaseCollisionManagerd> manager;
    // Spatial hash parameters, for the memory estimate.
    fcl::AABBd limits;
    double cell_size = 0;
    size_t table_size = 0;

    // Sets object i's sides to the float box's extents plus the pad (both
    // sides) and moves it to the box's centre.
    void place(int i, const float* box, bool resize)
    {
        fcl::Vector3d centre;
        for (int k = 0; k < 3; k++) {
            centre[k] = 0.5 * (static_cast<double>(box[k]) + static_cast<double>(box[3 + k]));
        }
        if (resize) {
            fcl::Boxd* shape = shapes[static_cast<size_t>(i)];
            for (int k = 0; k < 3; k++) {
                shape->side[k] =
                    (static_cast<double>(box[3 + k]) - static_cast<double>(box[k])) + 2 * pad;
            }
            shape->computeLocalAABB();
        }
        fcl::CollisionObjectd* object = objects[static_cast<size_t>(i)].get();
        object->setTranslation(centre);
        object->computeAABB();
    }
};

extern "C" bench_broad_fcl* bench_broad_fcl_create(bench_broad_fcl_kind kind,
                                                   const bench_broad_scene* scene)
{
    if (scene == nullptr || scene->boxes == nullptr || scene->n <= 0) {
        return nullptr;
    }
    const bool hash = kind == BENCH_BROAD_FCL_SPATIAL_HASH;
    if (hash && (!(scene->cell_size > 0) || !(scene->world_min[0] < scene->world_max[0]) ||
                 !(scene->world_min[1] < scene->world_max[1]) ||
                 !(scene->world_min[2] < scene->world_max[2]))) {
        return nullptr;
    }
    try {
        auto peer = std::make_unique<bench_broad_fcl>();
        const int n = scene->n;
        const size_t count = static_cast<size_t>(n);
        peer->kind = kind;
        peer->n = n;
        peer->boxes.assign(scene->boxes, scene->boxes + 6 * count);
        double magnitude = 0;
        for (size_t i = 0; i < 6 * count; i++) {
            magnitude = std::fmax(magnitude, std::fabs(static_cast<double>(scene->boxes[i])));
        }
        for (int k = 0; k < 3; k++) {
            magnitude = std::fmax(magnitude, std::fabs(static_cast<double>(scene->world_min[k])));
            magnitude = std::fmax(magnitude, std::fabs(static_cast<double>(scene->world_max[k])));
        }
        peer->pad = std::ldexp(magnitude > 0 ? magnitude : 1.0, -17);
        peer->shapes.resize(count);
        peer->objects.resize(count);
        peer->all.resize(count);
        peer->moved.reserve(count);
        for (size_t i = 0; i < count; i++) {
            auto shape = std::make_shared<fcl::Boxd>(1.0, 1.0, 1.0);
            peer->shapes[i] = shape.get();
            auto object = std::make_unique<fcl::CollisionObjectd>(shape);
            object->setUserData(reinterpret_cast<void*>(static_cast<intptr_t>(i)));
            peer->all[i] = object.get();
            peer->objects[i] = std::move(object);
            peer->place(static_cast<int>(i), scene->boxes + 6 * i, true);
        }
        switch (kind) {
        case BENCH_BROAD_FCL_DYNAMIC_TREE:
            peer->manager = std::make_unique<fcl::DynamicAABBTreeCollisionManagerd>();
            break;
        case BENCH_BROAD_FCL_SAP:
            peer->manager = std::make_unique<SapManager>();
            break;
        case BENCH_BROAD_FCL_SPATIAL_HASH: {
            // The world bounds grown by the objects' pad (twice, against
            // rounding), so that no box inside the bounds lands on FCL's
            // side list of objects crossing the scene limits.
            const fcl::Vector3d margin = fcl::Vector3d::Constant(2 * peer->pad);
            const fcl::Vector3d lo =
                fcl::Vector3d(scene->world_min[0], scene->world_min[1], scene->world_min[2]) -
                margin;
            const fcl::Vector3d hi =
                fcl::Vector3d(scene->world_max[0], scene->world_max[1], scene->world_max[2]) +
                margin;
            peer->limits = fcl::AABBd(lo, hi);
            peer->cell_size = scene->cell_size;
            peer->table_size = scene->hash_table_size > 0
                                   ? static_cast<size_t>(scene->hash_table_size)
                                   : static_cast<size_t>(n > 1000 ? n : 1000);
            peer->manager = std::make_unique<SpatialHash>(
                peer->cell_size, lo, hi, static_cast<unsigned int>(peer->table_size));
            break;
        }
        default:
            return nullptr;
        }
        peer->manager->registerObjects(peer->all);
        peer->manager->setup();
        return peer.release();
    } catch (const std::exception&) {
        return nullptr;
    }
}

extern "C" const char* bench_broad_fcl_name(const bench_broad_fcl* peer)
{
    switch (peer->kind) {
    case BENCH_BROAD_FCL_DYNAMIC_TREE:
        return "fcl-dtree";
    case BENCH_BROAD_FCL_SAP:
        return "fcl-sap";
    case BENCH_BROAD_FCL_SPATIAL_HASH:
        return "fcl-shash";
    }
    return "fcl-?";
}

extern "C" void bench_broad_fcl_update(bench_broad_fcl* peer, const float* boxes,
                                       const int* moved_ids, int moved_count)
{
    if (moved_count <= 0) {
        return;
    }
    bool resized = false;
    peer->moved.clear();
    for (int m = 0; m < moved_count; m++) {
        const int id = moved_ids[m];
        const float* box = boxes + 6 * id;
        float* mine = peer->boxes.data() + 6 * id;
        for (int k = 0; k < 6; k++) {
            mine[k] = box[k];
        }
        peer->place(id, box, false);
        fcl::CollisionObjectd* object = peer->objects[static_cast<size_t>(id)].get();
        if (!contains(object->getAABB(), box)) {
            // The box changed size beyond the pad: new sides.
            peer->place(id, box, true);
            resized = true;
        }
        peer->moved.push_back(object);
    }
    if (resized && peer->kind == BENCH_BROAD_FCL_SAP) {
        // SaP can neither resize nor unregister safely (see the top).
        peer->manager->clear();
        peer->manager->registerObjects(peer->all);
        peer->manager->setup();
    } else if (moved_count == peer->n) {
        peer->manager->update();
    } else {
        peer->manager->update(peer->moved);
    }
}

extern "C" int bench_broad_fcl_pairs(bench_broad_fcl* peer, int* out_pairs, int capacity)
{
    Collect c{peer->boxes.data(), out_pairs, out_pairs != nullptr && capacity > 0 ? capacity : 0,
              0};
    peer->manager->collide(&c, collect_pair);
    return c.count;
}

extern "C" size_t bench_broad_fcl_memory(const bench_broad_fcl* peer)
{
    const size_t n = static_cast<size_t>(peer->n);
    // Objects and their geometries (make_shared: one block with the
    // shared_ptr control block, counted as two words).
    size_t bytes = n * (sizeof(fcl::CollisionObjectd) + sizeof(fcl::Boxd) + 2 * sizeof(void*));
    switch (peer->kind) {
    case BENCH_BROAD_FCL_DYNAMIC_TREE: {
        using Node = fcl::DynamicAABBTreeCollisionManagerd::DynamicAABBNode;
        // 2n - 1 tree nodes; the object -> leaf unordered_map: one node
        // (next link, key, value) per object and about one bucket per object.
        bytes += (2 * n - 1) * sizeof(Node);
        bytes += n * (3 * sizeof(void*)) + n * sizeof(void*);
        break;
    }
    case BENCH_BROAD_FCL_SAP:
        bytes += static_cast<const SapManager*>(peer->manager.get())->structure_bytes();
        break;
    case BENCH_BROAD_FCL_SPATIAL_HASH: {
        // Buckets (std::list heads), one list node (two links + the object
        // pointer) per (object, cell), the object list, the object -> AABB
        // std::map (four words of links and colour + key + AABB).
        size_t entries = 0;
        for (const auto& object : peer->objects) {
            entries += hash_cells(object->getAABB(), peer->limits, peer->cell_size);
        }
        bytes += peer->table_size * sizeof(std::list<fcl::CollisionObjectd*>);
        bytes += entries * 3 * sizeof(void*);
        bytes += n * 3 * sizeof(void*);
        bytes += n * (4 * sizeof(void*) + sizeof(void*) + sizeof(fcl::AABBd));
        break;
    }
    }
    return bytes;
}

extern "C" void bench_broad_fcl_destroy(bench_broad_fcl* peer)
{
    if (peer != nullptr) {
        // The manager refers to the objects: it goes first.
        peer->manager.reset();
        delete peer;
    }
}
