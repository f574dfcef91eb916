// Poses, boxes and the names of statuses.
#include "core/internal.h"

carom_xform carom_xform_identity(void) {
    carom_xform xf = {v3(0, 0, 0), glms_quat_identity()};
    return xf;
}

carom_xform carom_xform_make(vec3s position, vec3s axis, float angle) {
    carom_xform xf = {position, glms_quat_identity()};
    float len = sqrtf(v3_len2(axis));
    if (len > 0.0f && isfinite(len)) {
        xf.q = glms_quatv(angle, v3_scale(axis, 1.0f / len));
    }
    return xf;
}

vec3s carom_xform_point(carom_xform xf, vec3s v) { return v3_add(carom_xform_vector(xf, v), xf.p); }

vec3s carom_xform_vector(carom_xform xf, vec3s v) {
    carom_rot r = carom_rot_from_quat(xf.q);
    return rot_apply(&r, v);
}

bool carom_xform_is_valid(carom_xform xf) {
    if (!carom_vec3_is_valid(xf.p)) return false;
    float n2 = xf.q.x * xf.q.x + xf.q.y * xf.q.y + xf.q.z * xf.q.z + xf.q.w * xf.q.w;
    return fabsf(n2 - 1.0f) <= CAROM_QUAT_TOLERANCE;  // false for NaN too
}

bool carom_aabb_is_valid(carom_aabb box) {
    return carom_vec3_is_valid(box.min) && carom_vec3_is_valid(box.max) && box.min.x <= box.max.x &&
           box.min.y <= box.max.y && box.min.z <= box.max.z;
}

carom_rot carom_rot_from_quat(versors q) {
    // Normalise here so that callers may pass quaternions that are off unit
    // length within CAROM_QUAT_TOLERANCE without scaling the shapes.
    float n2 = q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w;
    float s = n2 > 0.0f ? 2.0f / n2 : 0.0f;
    float x = q.x, y = q.y, z = q.z, w = q.w;
    float xx = x * x * s, yy = y * y * s, zz = z * z * s;
    float xy = x * y * s, xz = x * z * s, yz = y * z * s;
    float wx = w * x * s, wy = w * y * s, wz = w * z * s;
    carom_rot r = {{v3(1.0f - yy - zz, xy - wz, xz + wy), v3(xy + wz, 1.0f - xx - zz, yz - wx),
                    v3(xz - wy, yz + wx, 1.0f - xx - yy)}};
    return r;
}

const char* carom_status_string(carom_status status) {
    switch (status) {
        case CAROM_OK: return "ok";
        case CAROM_ERR_INVALID_ARG: return "invalid argument";
        case CAROM_ERR_DEGENERATE: return "degenerate input";
        case CAROM_ERR_CAPACITY: return "buffer too small";
        case CAROM_ERR_OUT_OF_MEMORY: return "out of memory";
        case CAROM_ERR_DUPLICATE_ID: return "duplicate id";
        case CAROM_ERR_UNKNOWN_ID: return "unknown id";
    }
    return "unknown status";
}

const char* carom_query_state_string(carom_query_state state) {
    switch (state) {
        case CAROM_DONE: return "done";
        case CAROM_INVALID_INPUT: return "invalid input";
        case CAROM_MAX_ITERATIONS: return "iteration limit";
    }
    return "unknown state";
}
