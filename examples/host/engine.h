/* engine.h -- a stand-in for a game engine's GPU resource manager: memory
 * behind integer handles, and no pointer ever leaves it. */
#ifndef DLB_EXAMPLE_ENGINE_H
#define DLB_EXAMPLE_ENGINE_H

#include <lua.h>

/* Registers the backend "engine" in L (dlbridge must be open in L). Returns
 * 0, or -1 with the dlbridge.Error on the stack. */
int engine_register(lua_State *L);

/* Sets the global table `engine` with engine.analyze(capsule). */
void engine_open_consumer(lua_State *L);

#endif
