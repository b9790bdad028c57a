#include "engine/passes.h"
