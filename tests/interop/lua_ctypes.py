"""liblua5.4 and libdlbridge through ctypes, for the interop tests: the
libraries (from the build in $DLBRIDGE_BUILD, default ../../build) with the
signatures of the Lua C API functions the tests call."""
import ctypes
import ctypes.util
import os

HERE = os.path.dirname(os.path.abspath(__file__))
BUILD = os.environ.get("DLBRIDGE_BUILD", os.path.join(HERE, "..", "..", "build"))


def _find_lua():
    # A copy in the build's lib/ first: tests/gpu/run runs where no Lua is installed.
    carried = os.path.join(BUILD, "lib", "liblua5.4.so.0")
    name = ctypes.util.find_library("lua5.4")
    for cand in (carried, name, "liblua5.4.so.0", "/usr/lib/x86_64-linux-gnu/liblua5.4.so.0"):
        if not cand:
            continue
        try:
            # RTLD_GLOBAL: libdlbridge.so does not link liblua, the host does.
            return ctypes.CDLL(cand, mode=ctypes.RTLD_GLOBAL)
        except OSError:
            pass
    raise OSError("liblua5.4.so.0 not found")


# PyDLL, not CDLL: the GIL stays held during calls into Lua and dlbridge, since
# they can run NumPy's deleter (it decrefs the exporting ndarray).
lua = _find_lua()
dlb = ctypes.PyDLL(os.path.join(BUILD, "lib", "libdlbridge.so"))

c_L = ctypes.c_void_p
lua.luaL_newstate.restype = c_L
lua.luaL_newstate.argtypes = []
lua.luaL_openlibs.argtypes = [c_L]
lua.lua_close.argtypes = [c_L]
lua.luaL_loadstring.argtypes = [c_L, ctypes.c_char_p]
lua.lua_pcallk.argtypes = [c_L, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_ssize_t,
                           ctypes.c_void_p]
lua.lua_gettop.argtypes = [c_L]
lua.lua_settop.argtypes = [c_L, ctypes.c_int]
lua.lua_type.argtypes = [c_L, ctypes.c_int]
lua.lua_toboolean.argtypes = [c_L, ctypes.c_int]
lua.lua_isinteger.argtypes = [c_L, ctypes.c_int]
lua.lua_tointegerx.restype = ctypes.c_longlong
lua.lua_tointegerx.argtypes = [c_L, ctypes.c_int, ctypes.c_void_p]
lua.lua_tonumberx.restype = ctypes.c_double
lua.lua_tonumberx.argtypes = [c_L, ctypes.c_int, ctypes.c_void_p]
lua.lua_tolstring.restype = ctypes.c_void_p
lua.lua_tolstring.argtypes = [c_L, ctypes.c_int, ctypes.POINTER(ctypes.c_size_t)]
lua.luaL_tolstring.restype = ctypes.c_void_p
lua.luaL_tolstring.argtypes = [c_L, ctypes.c_int, ctypes.POINTER(ctypes.c_size_t)]
lua.lua_pushlstring.restype = ctypes.c_void_p
lua.lua_pushlstring.argtypes = [c_L, ctypes.c_char_p, ctypes.c_size_t]
lua.lua_setglobal.argtypes = [c_L, ctypes.c_char_p]
lua.lua_rawlen.restype = ctypes.c_ulonglong
lua.lua_rawlen.argtypes = [c_L, ctypes.c_int]
lua.lua_rawgeti.argtypes = [c_L, ctypes.c_int, ctypes.c_longlong]
dlb.dlb_preload.argtypes = [c_L]
