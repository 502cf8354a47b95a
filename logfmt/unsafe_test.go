package logfmt

import "unsafe"

func unsafePointer(f *float32) unsafe.Pointer { return unsafe.Pointer(f) }
