/*
 * bcryptprimitives.dll for wine 8.0 (Debian bookworm's), which has no
 * such DLL: Go 1.22 and later load it at start-up, from System32, for
 * ProcessPrng, and a Go binary cannot start without it. This stub
 * exports ProcessPrng and fills the buffer from RtlGenRandom
 * (advapi32's SystemFunction036), which wine has. .ci/wine-tests builds
 * it with mingw-w64 and puts it in the wine prefix's System32. It is for
 * running gdnn's tests under wine only.
 */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

/* The DLL's entry point: nothing to set up (it is linked without the C
 * runtime, whose DllMainCRTStartup would otherwise be the entry). */
BOOL WINAPI DllMainCRTStartup(HINSTANCE dll, DWORD reason, LPVOID reserved)
{
	(void)dll;
	(void)reason;
	(void)reserved;
	return TRUE;
}

/* ProcessPrng fills n bytes at data with random bytes; it returns TRUE,
 * or FALSE if RtlGenRandom fails. RtlGenRandom takes a ULONG length, so
 * a larger buffer is filled in parts. */
BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T n)
{
	while (n > 0) {
		ULONG part = n > 0x40000000 ? 0x40000000 : (ULONG)n;
		if (!SystemFunction036(data, part))
			return FALSE;
		data += part;
		n -= part;
	}
	return TRUE;
}
