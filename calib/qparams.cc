#include "calib/qparams.h"
