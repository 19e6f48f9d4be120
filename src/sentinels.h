/* The runtime's singleton marker objects (ffi.GetKwargsObject, ...). */
#ifndef WEBFFI_SRC_SENTINELS_H_
#define WEBFFI_SRC_SENTINELS_H_

#include <tvm/ffi/c_api.h>

/* The KWARGS marker (borrowed; it lives as long as the runtime). */
TVMFFIObject* wf_kwargs_object(void);

/* The missing-value marker ffi.MapGetItemOrMissing answers for an absent
 * key (borrowed; it lives as long as the runtime). */
TVMFFIObject* wf_missing_object(void);

#endif /* WEBFFI_SRC_SENTINELS_H_ */
