#!/usr/bin/env python3
"""check_vtk.py SHEAF BASE - `sheaf ckpt export --vtk` of the mesh that
ckpt_mesh_write wrote (step 7, 24 points over the ranks in rank order), read
back with a real VTK reader: meshio (PyPI / Debian python3-meshio) or, without
it, VTK's own Python module. Asserted: --dims 4,3,2 gives STRUCTURED_POINTS
whose point k sits at (k%4, k/4%3, k/12) and carries T, id, mask, x, y, z
exactly (types kept); --points x,y,z gives 24 points at the stored
coordinates with one vertex cell each and T, id, mask as point data;
size mismatches fail with exit 1 naming the field and both sizes; bad
usage exits 2. Exit 77 when neither meshio nor vtk can be imported."""
import atexit
import os
import shutil
import subprocess
import sys
import tempfile

sheaf, base = sys.argv[1], sys.argv[2]
try:
    import numpy as np
    import meshio
    reader = "meshio"
except ImportError:
    try:
        import numpy as np
        import vtk
        from vtk.util.numpy_support import vtk_to_numpy
        reader = "vtk"
    except ImportError:
        print("SKIP: neither meshio nor vtk can be imported in %s (scripts/install-deps.sh installs "
              "python3-meshio)" % sys.executable)
        sys.exit(77)


def run(*args, expect=0):
    p = subprocess.run([sheaf, "ckpt", *args], capture_output=True, text=True, timeout=60)
    if p.returncode != expect:
        sys.exit(f"FAIL: sheaf ckpt {' '.join(args)}: exit {p.returncode}, expected {expect}\n{p.stdout}{p.stderr}")
    return p.stdout + p.stderr


def read(path):
    """points (n x 3), cell count of vertices or None, point data dict"""
    if reader == "meshio":
        m = meshio.read(path)
        verts = sum(len(c.data) for c in m.cells if c.type == "vertex")
        return np.asarray(m.points), verts, {k: np.asarray(v).reshape(-1) for k, v in m.point_data.items()}
    r = vtk.vtkGenericDataObjectReader()
    r.SetFileName(path)
    r.Update()
    o = r.GetOutput()
    pts = np.array([o.GetPoint(i) for i in range(o.GetNumberOfPoints())])
    verts = sum(1 for i in range(o.GetNumberOfCells()) if o.GetCellType(i) == 1) if o.IsA("vtkUnstructuredGrid") else 0
    pd = o.GetPointData()
    return pts, verts, {pd.GetArrayName(i): vtk_to_numpy(pd.GetArray(i)) for i in range(pd.GetNumberOfArrays())}


k = np.arange(24)
want = {"T": (100 + 0.25 * k, np.float64), "id": (-3 * k, np.int32), "mask": (k % 2, np.uint8),
        "x": (1.5 * (k % 4), np.float64), "y": (1.5 * (k // 4 % 3), np.float64), "z": (1.5 * (k // 12), np.float64)}
grid = np.stack([k % 4, k // 4 % 3, k // 12], axis=1).astype(float)


def check_data(what, data, names):
    for n in names:
        v, t = want[n]
        if n not in data:
            sys.exit(f"FAIL: {what}: no point data '{n}' (has {sorted(data)})")
        got = data[n]
        same_type = (got.dtype.kind, got.dtype.itemsize) == (np.dtype(t).kind, np.dtype(t).itemsize)  # any byte order
        if not same_type or not np.array_equal(got, v.astype(t)):
            sys.exit(f"FAIL: {what}: '{n}' is {got.dtype} {got.tolist()}, expected {np.dtype(t)} {v.tolist()}")


tmp = tempfile.mkdtemp()
atexit.register(shutil.rmtree, tmp, True)
d = os.path.join(base, "step-%020d" % 7)
# 1. structured grid: every field of 24 elements (-f picks them: 'short' has 5)
out = os.path.join(tmp, "grid.vtk")
run("export", "--vtk", "--dims", "4,3,2", "-f", "T,id,mask,x,y,z", "-o", out, d)
pts, _, data = read(out)
if pts.shape != (24, 3) or not np.allclose(pts, grid):
    sys.exit(f"FAIL: grid points {pts.tolist()}")
check_data("--dims", data, ["T", "id", "mask", "x", "y", "z"])
# 2. point cloud: coordinates from x, y, z; the other fields as point data
out2 = os.path.join(tmp, "cloud.vtk")
run("export", "--vtk", "--points", "x,y,z", "-f", "T,id,mask", "-o", out2, base, "--step", "7")
pts, verts, data = read(out2)
if pts.shape != (24, 3) or not np.allclose(pts, 1.5 * grid) or verts != 24:
    sys.exit(f"FAIL: cloud: {pts.shape} points, {verts} vertex cells")
check_data("--points", data, ["T", "id", "mask"])
# 3. size mismatches name the field and both sizes; nothing half-written is left as success
msg = run("export", "--vtk", "--dims", "5,5,1", "-f", "T", "-o", os.path.join(tmp, "bad.vtk"), d, expect=1)
if "'T'" not in msg or "24" not in msg or "25" not in msg:
    sys.exit(f"FAIL: --dims mismatch message: {msg}")
if os.path.exists(os.path.join(tmp, "bad.vtk")):
    sys.exit("FAIL: a refused export left bad.vtk behind")
msg = run("export", "--vtk", "--dims", "4,3,2", "-o", os.path.join(tmp, "bad2.vtk"), d, expect=1)
if "'short'" not in msg or " 5 " not in msg or "24" not in msg:
    sys.exit(f"FAIL: default fields with a 5-element one: {msg}")
msg = run("export", "--vtk", "--points", "x,y,short", "-o", os.path.join(tmp, "bad3.vtk"), d, expect=1)
if "'short'" not in msg or "5" not in msg or "24" not in msg:
    sys.exit(f"FAIL: --points mismatch message: {msg}")
run("export", "--vtk", "--points", "x,y,nosuch", "-o", os.path.join(tmp, "bad4.vtk"), d, expect=1)
run("export", "--vtk", "--dims", "4,3", "-o", os.path.join(tmp, "u.vtk"), d, expect=2)
run("export", "--vtk", "--dims", "4,3,0", "-o", os.path.join(tmp, "u.vtk"), d, expect=2)
run("export", "--vtk", "--dims", "4,3,2", "--points", "x,y,z", "-o", os.path.join(tmp, "u.vtk"), d, expect=2)
run("export", "--dims", "4,3,2", "-o", os.path.join(tmp, "u.vtk"), d, expect=2)
run("export", "--vtk", "--dims", "4,3,2", d, expect=2)
print(f"check_vtk: OK ({reader} read the structured grid and the point cloud back exactly)")
