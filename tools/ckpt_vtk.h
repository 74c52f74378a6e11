/* ckpt_vtk.h - `sheaf ckpt export --vtk` (ckpt_vtk.c). */
#ifndef SHEAF_TOOL_CKPT_VTK_H
#define SHEAF_TOOL_CKPT_VTK_H
#include "sheaf_ckpt_read.h"

/* Write fields of ck to `out` as a legacy VTK file: exactly one of dims
 * ("NX,NY,NZ": structured points) and points ("X,Y,Z": coordinate fields,
 * vertex cells); fields: "A,B,..." or NULL (every field but the
 * coordinates). TOOL_OK, TOOL_FAIL or TOOL_USAGE after a message. */
int ckpt_export_vtk(sheaf_ckpt *ck, const char *out, const char *dims, const char *points, const char *fields);

#endif
