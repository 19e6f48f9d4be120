/* The structural visitor of upstream's tvm/ffi/extra/structural_visit.h,
 * seen from C: a StructuralVisitorObj is an object whose vtable's `visit`
 * visits one value and answers None (go on), a VisitInterrupt (stop, with a
 * payload) or an Error (stop, failed). Types say how their children are
 * visited through the `__s_visit__` attribute. */
#ifndef WEBFFI_SRC_STRUCTURAL_VISIT_H_
#define WEBFFI_SRC_STRUCTURAL_VISIT_H_

#include <tvm/ffi/c_api.h>

typedef struct wf_visitor wf_visitor;

/* Upstream's FStructuralVisit: the value is a borrowed view; the result is
 * owned (None, a VisitInterrupt or an Error). */
typedef TVMFFIAny (*wf_visit_fn)(wf_visitor* visitor, TVMFFIAny value);

typedef struct {
  wf_visit_fn visit;
} wf_visitor_vtable;

/* Layout of upstream's StructuralVisitorObj. */
struct wf_visitor {
  TVMFFIObject header;
  const wf_visitor_vtable* vtable;
  int32_t def_region_mode; /* TVMFFIDefRegionKind */
};

/* Registers ffi.VisitInterrupt, ffi.StructuralVisitor, the containers'
 * __s_visit__ hooks and the ffi.StructuralVisitor* / ffi.StructuralWalk
 * functions. */
int wf_structural_visit_register(void);

#endif /* WEBFFI_SRC_STRUCTURAL_VISIT_H_ */
