// Nothing: the target this file builds only carries the precompiled header
// of libtorch's headers that every libtorch target reuses (CMakeLists.txt,
// t5xx_use_torch_pch).
