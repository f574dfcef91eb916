/// carom — 3D collision detection. This umbrella header includes every area.
#ifndef CAROM_H
#define CAROM_H

#include "base.h"
#include "shape.h"
#include "narrow.h"
#include "cast.h"
#include "mid.h"
#include "broad.h"

#endif
