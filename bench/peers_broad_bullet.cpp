// Bullet 3.24 broad-phase peer (Debian's float build; never define
// BT_USE_DOUBLE_PRECISION against it): btDbvtBroadphase and the axis sweep
// (btAxisSweep3, or bt32BitAxisSweep3 past 16000 boxes), each with its
// default btHashedOverlappingPairCache, used without a dispatcher (no
// narrow phase).
//
// What the pair cache holds, since the exact filter depends on it:
// - btDbvtBroadphase keeps each proxy's leaf in a dynamic tree as a fat
//   box. setAabb leaves the leaf alone while the new box is inside it, and
//   otherwise reinserts it grown by gDbvtMargin on every side (a global,
//   0.05 in world units: not relative to the scene's scale) plus a motion
//   prediction (0 by default). A proxy whose leaf changed is collided at
//   once against both trees (pairs of intersecting fat leaves are added);
//   proxies left alone for two frames migrate to the second, "fixed" tree.
//   Pairs are removed only by the cleanup in calculateOverlappingPairs,
//   which re-tests a rotating 10% of the cache per frame against the fat
//   leaves. The cache is a superset of the true pairs: fat pairs, and pairs
//   that separated and wait for the cleanup. The cost of a frame depends on
//   how many boxes leave their fat leaves, i.e. on the step size against
//   the 0.05 margin.
// - The axis sweep quantizes boxes to 16- or 32-bit integers over the world
//   bounds (a minimum to the even integer at or below it, a maximum to that
//   even integer plus one), keeps three sorted endpoint arrays, and adds or
//   removes a pair as setAabb's endpoint swaps begin or end an overlap of
//   the quantized boxes. Overlapping (or touching) boxes still overlap once
//   quantized, so the cache is a superset of the true pairs (it also holds
//   boxes about a quantum apart). Its ray-cast accelerator, a full
//   btDbvtBroadphase copy of the scene updated on every setAabb, is
//   disabled: nothing here casts rays.
// Both report exact pairs after the filter: it rejects every candidate
// whose current float boxes do not overlap.
#include "peers_broad.h"

#include <cstdint>
#include <memory>
#include <new>
#include <vector>

#include <BulletCollision/BroadphaseCollision/btAxisSweep3.h>
#include <BulletCollision/BroadphaseCollision/btDbvtBroadphase.h>
#include <BulletCollision/BroadphaseCollision/btOverlappingPairCache.h>
#include <LinearMath/btAlignedAllocator.h>

namespace {

// btAxisSweep3 holds at most 16384 proxies (16-bit handles and edges).
constexpr int kMaxSap16 = 16000;

bool boxes_overlap(const float* a, const float* b)
{
    return a[0] <= b[3] && b[0] <= a[3] && a[1] <= b[4] && b[1] <= a[4] && a[2] <= b[5] &&
           b[2] <= a[5];
}

int proxy_id(const btBroadphaseProxy* p)
{
    return static_cast<int>(reinterpret_cast<intptr_t>(p->m_clientObject));
}

size_t dbvt_bytes(const btDbvt& tree)
{
    const size_t leaves = static_cast<size_t>(tree.m_leaves);
    size_t bytes = leaves > 0 ? (2 * leaves - 1) * sizeof(btDbvtNode) : 0;
    if (tree.m_free != nullptr) {
        bytes += sizeof(btDbvtNode); // one node kept for reuse
    }
    bytes += static_cast<size_t>(tree.m_stkStack.capacity()) * sizeof(btDbvt::sStkNN);
    return bytes;
}

template <typename Sweep>
size_t sweep_bytes(int n)
{
    // The handle pool and three edge arrays are sized at construction for
    // n proxies plus the sentinel.
    const size_t handles = static_cast<size_t>(n) + 1;
    return handles * sizeof(typename Sweep::Handle) + 3 * 2 * handles * sizeof(typename Sweep::Edge);
}

}  // namespace

struct bench_broad_bullet {
    bench_broad_bullet_kind kind = BENCH_BROAD_BULLET_DBVT;
    bool wide = false; // bt32BitAxisSweep3
    int n = 0;
    std::vector<float> boxes; // current boxes, for the exact filter
    std::unique_ptr<btBroadphaseInterface> broadphase;
    std::vector<btBroadphaseProxy*> proxies; // by id

    ~bench_broad_bullet()
    {
        broadphase.reset();
        // The axis sweep's handles live in its own pool. btDbvtBroadphase
        // allocates each proxy with btAlignedAlloc and does not free them
        // when deleted; destroyProxy would, but it also searches the whole
        // pair cache for each proxy (quadratic teardown), so the proxies
        // (plain data) are freed here after the broad phase is gone.
        if (kind == BENCH_BROAD_BULLET_DBVT) {
            for (btBroadphaseProxy* p : proxies) {
                btAlignedFree(p);
            }
        }
    }
};

extern "C" bench_broad_bullet* bench_broad_bullet_create(bench_broad_bullet_kind kind,
                                                         const bench_broad_scene* scene)
{
    if (scene == nullptr || scene->boxes == nullptr || scene->n <= 0) {
        return nullptr;
    }
    const btVector3 world_min(scene->world_min[0], scene->world_min[1], scene->world_min[2]);
    const btVector3 world_max(scene->world_max[0], scene->world_max[1], scene->world_max[2]);
    if (kind == BENCH_BROAD_BULLET_SAP &&
        !(world_min.x() < world_max.x() && world_min.y() < world_max.y() &&
          world_min.z() < world_max.z())) {
        return nullptr;
    }
    try {
        auto peer = std::make_unique<bench_broad_bullet>();
        const int n = scene->n;
        peer->kind = kind;
        peer->n = n;
        peer->boxes.assign(scene->boxes, scene->boxes + 6 * static_cast<size_t>(n));
        switch (kind) {
        case BENCH_BROAD_BULLET_DBVT:
            peer->broadphase = std::make_unique<btDbvtBroadphase>();
            break;
        case BENCH_BROAD_BULLET_SAP:
            // Arguments: bounds, proxy capacity, pair cache (0: a new
            // btHashedOverlappingPairCache), disableRaycastAccelerator.
            if (n <= kMaxSap16) {
                peer->broadphase = std::make_unique<btAxisSweep3>(
                    world_min, world_max, static_cast<unsigned short>(n), nullptr, true);
            } else {
                peer->wide = true;
                peer->broadphase = std::make_unique<bt32BitAxisSweep3>(
                    world_min, world_max, static_cast<unsigned int>(n), nullptr, true);
            }
            break;
        default:
            return nullptr;
        }
        peer->proxies.assign(static_cast<size_t>(n), nullptr);
        for (int i = 0; i < n; i++) {
            const float* b = scene->boxes + 6 * i;
            // Shape type and filter: any shape, default group, all groups.
            peer->proxies[static_cast<size_t>(i)] = peer->broadphase->createProxy(
                btVector3(b[0], b[1], b[2]), btVector3(b[3], b[4], b[5]), BOX_SHAPE_PROXYTYPE,
                reinterpret_cast<void*>(static_cast<intptr_t>(i)),
                btBroadphaseProxy::DefaultFilter, btBroadphaseProxy::AllFilter, nullptr);
            if (peer->proxies[static_cast<size_t>(i)] == nullptr) {
                return nullptr;
            }
        }
        peer->broadphase->calculateOverlappingPairs(nullptr);
        return peer.release();
    } catch (const std::exception&) {
        return nullptr;
    }
}

extern "C" const char* bench_broad_bullet_name(const bench_broad_bullet* peer)
{
    if (peer->kind == BENCH_BROAD_BULLET_DBVT) {
        return "bullet-dbvt";
    }
    return peer->wide ? "bullet-sap32" : "bullet-sap";
}

extern "C" void bench_broad_bullet_update(bench_broad_bullet* peer, const float* boxes,
                                          const int* moved_ids, int moved_count)
{
    btBroadphaseInterface* bp = peer->broadphase.get();
    for (int m = 0; m < moved_count; m++) {
        const int id = moved_ids[m];
        const float* b = boxes + 6 * id;
        float* mine = peer->boxes.data() + 6 * id;
        for (int k = 0; k < 6; k++) {
            mine[k] = b[k];
        }
        bp->setAabb(peer->proxies[static_cast<size_t>(id)], btVector3(b[0], b[1], b[2]),
                    btVector3(b[3], b[4], b[5]), nullptr);
    }
    bp->calculateOverlappingPairs(nullptr);
}

extern "C" int bench_broad_bullet_pairs(bench_broad_bullet* peer, int* out_pairs, int capacity)
{
    if (out_pairs == nullptr) {
        capacity = 0;
    }
    const btBroadphasePairArray& cache =
        peer->broadphase->getOverlappingPairCache()->getOverlappingPairArray();
    const float* boxes = peer->boxes.data();
    const int size = cache.size();
    int count = 0;
    for (int i = 0; i < size; i++) {
        const btBroadphasePair& pair = cache[i];
        int a = proxy_id(pair.m_pProxy0);
        int b = proxy_id(pair.m_pProxy1);
        if (!boxes_overlap(boxes + 6 * a, boxes + 6 * b)) {
            continue;
        }
        if (a > b) {
            const int t = a;
            a = b;
            b = t;
        }
        if (count < capacity) {
            out_pairs[2 * count] = a;
            out_pairs[2 * count + 1] = b;
        }
        count++;
    }
    return count;
}

extern "C" size_t bench_broad_bullet_memory(const bench_broad_bullet* peer)
{
    btOverlappingPairCache* cache = peer->broadphase->getOverlappingPairCache();
    // The hashed cache's pair array, and its hash table and next links (two
    // int arrays grown to the pair array's capacity).
    size_t bytes = static_cast<size_t>(cache->getOverlappingPairArray().capacity()) *
                   (sizeof(btBroadphasePair) + 2 * sizeof(int));
    if (peer->kind == BENCH_BROAD_BULLET_DBVT) {
        const auto* dbvt = static_cast<const btDbvtBroadphase*>(peer->broadphase.get());
        bytes += static_cast<size_t>(peer->n) * sizeof(btDbvtProxy);
        bytes += dbvt_bytes(dbvt->m_sets[0]) + dbvt_bytes(dbvt->m_sets[1]);
    } else if (peer->wide) {
        bytes += sweep_bytes<bt32BitAxisSweep3>(peer->n);
    } else {
        bytes += sweep_bytes<btAxisSweep3>(peer->n);
    }
    return bytes;
}

extern "C" void bench_broad_bullet_destroy(bench_broad_bullet* peer)
{
    delete peer;
}
