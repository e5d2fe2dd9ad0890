// The target's one source file (a C target needs one); everything is in the header.
#include "CProcessShims.h"
