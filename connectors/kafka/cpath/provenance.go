package cpath

/*
#include <stdlib.h>
#include "cpath.h"
*/
import "C"

import "unsafe"

// SetProvenance makes the pipeline add header name with value stamp to every record without one, and not copy
// a record whose header names the target cluster (targetAlias, targetID; "" unknown), as package
// connectors/provenance decides: its skips come in Batch.Forwarded (Skipped). Call it before Assign.
func (p *Pipeline) SetProvenance(name string, stamp []byte, targetAlias, targetID string) {
	cname, calias, cid := C.CString(name), C.CString(targetAlias), C.CString(targetID)
	defer C.free(unsafe.Pointer(cname))
	defer C.free(unsafe.Pointer(calias))
	defer C.free(unsafe.Pointer(cid))
	cstamp := C.CBytes(stamp)
	defer C.free(cstamp)
	if C.cp_set_provenance(p.c, cname, (*C.char)(cstamp), C.int(len(stamp)), calias, cid) != 0 {
		panic("cpath: out of memory") // as the C side aborts on the record path
	}
}
