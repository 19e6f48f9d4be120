/* Internal access to the device API registry. */
#ifndef WEBFFI_SRC_DEVICE_API_H_
#define WEBFFI_SRC_DEVICE_API_H_

#include <webffi/device_api.h>

/* Like WebFFIDeviceAPIGet but raises nothing (for deleters). */
const WebFFIDeviceAPI* wf_device_api_find(int32_t device_type);

#endif /* WEBFFI_SRC_DEVICE_API_H_ */
