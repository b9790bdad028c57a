# Sourced by tools/arm/test.sh and model_check.sh: the octet levels of the qemu CPU models
# they use, scalar first, each level after those it includes.
#   arm_cpu_levels MODEL   # prints e.g. "scalar neon neondot"; nothing for a model not listed
arm_cpu_levels() {
  case "$1" in
    max) echo "scalar neon neondot neoni8mm" ;;
    cortex-a76 | neoverse-n1) echo "scalar neon neondot" ;;
    cortex-a72 | cortex-a57 | cortex-a53) echo "scalar neon" ;;
  esac
}
