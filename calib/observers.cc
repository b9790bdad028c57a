#include "calib/observers.h"
