/// Three-vector helpers in double shared by the references (private to
/// tests/common).
#ifndef CAROM_TESTKIT_REF_VEC_H
#define CAROM_TESTKIT_REF_VEC_H

static inline void v_sub(double r[3], const double a[3], const double b[3])
{
    r[0] = a[0] - b[0];
    r[1] = a[1] - b[1];
    r[2] = a[2] - b[2];
}

static inline double v_dot(const double a[3], const double b[3])
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

static inline void v_cross(double r[3], const double a[3], const double b[3])
{
    double x = a[1] * b[2] - a[2] * b[1];
    double y = a[2] * b[0] - a[0] * b[2];
    double z = a[0] * b[1] - a[1] * b[0];
    r[0] = x;
    r[1] = y;
    r[2] = z;
}

#endif
