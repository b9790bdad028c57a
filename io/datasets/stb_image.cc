// The one translation unit that compiles stb_image (Debian's libstb-dev ships it as a
// header; compiling it here keeps the build independent of a libstb.so).
#define STB_IMAGE_IMPLEMENTATION
#define STBI_FAILURE_USERMSG
#include <stb/stb_image.h>
