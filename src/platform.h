/* Build-target facts shared by the core: thread-local storage and atomics. */
#ifndef WEBFFI_SRC_PLATFORM_H_
#define WEBFFI_SRC_PLATFORM_H_

/*
 * Per-thread state (the raised-error slot). Wasm builds are single-threaded
 * today, where a plain global is the same thing; a threaded wasm build
 * (SharedArrayBuffer) turns this back into _Thread_local.
 */
#if defined(__wasm__) && !defined(__wasm_atomics__)
#define WF_THREAD_LOCAL
#else
#define WF_THREAD_LOCAL _Thread_local
#endif

/* Reference counts use the compiler's atomics so threads need no change. */
#define WF_ATOMIC_ADD(ptr, v) __atomic_fetch_add((ptr), (v), __ATOMIC_RELAXED)
#define WF_ATOMIC_SUB(ptr, v) __atomic_fetch_sub((ptr), (v), __ATOMIC_ACQ_REL)
#define WF_ATOMIC_LOAD(ptr) __atomic_load_n((ptr), __ATOMIC_ACQUIRE)

#endif /* WEBFFI_SRC_PLATFORM_H_ */
