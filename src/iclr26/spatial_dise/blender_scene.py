"""Run inside Blender (`blender -b -P blender_scene.py -- spec.json`, or with the `bpy` module):
build the painter's triangles as one mesh, one emission material per face (its shaded colour),
an orthographic camera matching `render.Camera`, Freestyle lines on material boundaries and
silhouettes (the painter's outline rule), and render with Cycles on the CPU to `spec["out"]`.

This file imports only `bpy` and the standard library: Blender's Python has nothing else.
"""

from __future__ import annotations

import json
import sys


def _linear(c: int) -> float:
    """An sRGB byte as the linear value Blender's colour management turns back into that byte."""
    x = c / 255
    return x / 12.92 if x <= 0.04045 else ((x + 0.055) / 1.055) ** 2.4


def build_and_render(spec: dict) -> None:
    """Render one spec (see `blender.render_blender`) to the PNG at spec['out']."""
    import bpy
    from mathutils import Vector

    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene = bpy.context.scene
    scene.render.engine = "CYCLES"
    scene.cycles.device = "CPU"
    scene.cycles.samples = int(spec.get("samples", 16))
    scene.cycles.use_denoising = False
    scene.cycles.seed = 0
    scene.render.resolution_x, scene.render.resolution_y = spec["width"], spec["height"]
    scene.render.resolution_percentage = 100
    scene.render.film_transparent = False
    scene.view_settings.view_transform = "Standard"  # colours as given, no filmic curve
    world = bpy.data.worlds.new("white")
    world.use_nodes = True
    world.node_tree.nodes["Background"].inputs[0].default_value = (1, 1, 1, 1)
    scene.world = world

    verts = [tuple(v) for tri in spec["triangles"] for v in tri]
    faces = [(3 * i, 3 * i + 1, 3 * i + 2) for i in range(len(spec["triangles"]))]
    mesh = bpy.data.meshes.new("scene")
    mesh.from_pydata(verts, [], faces)
    materials: dict[tuple, int] = {}
    for poly, face_id, color in zip(mesh.polygons, spec["faces"], spec["colors"], strict=True):
        key = (face_id, *color)
        if key not in materials:
            mat = bpy.data.materials.new(f"face{len(materials)}")
            mat.use_nodes = True
            nodes = mat.node_tree.nodes
            nodes.clear()
            emit = nodes.new("ShaderNodeEmission")
            emit.inputs["Color"].default_value = (*[_linear(c) for c in color], 1)
            out = nodes.new("ShaderNodeOutputMaterial")
            mat.node_tree.links.new(emit.outputs["Emission"], out.inputs["Surface"])
            materials[key] = len(mesh.materials)
            mesh.materials.append(mat)
        poly.material_index = materials[key]
    obj = bpy.data.objects.new("scene", mesh)
    scene.collection.objects.link(obj)

    cam_data = bpy.data.cameras.new("camera")
    cam_data.type = "ORTHO"
    cam_data.ortho_scale = spec["ortho_scale"]
    cam_data.clip_start, cam_data.clip_end = 0.01, 1000
    cam = bpy.data.objects.new("camera", cam_data)
    scene.collection.objects.link(cam)
    direction, up = Vector(spec["direction"]).normalized(), Vector(spec["up"]).normalized()
    cam.location = Vector(spec["center"]) + 50 * direction
    cam.rotation_mode = "QUATERNION"
    cam.rotation_quaternion = (-direction).to_track_quat("-Z", "Y")
    # to_track_quat picks its own roll; turn about the view axis until the camera's up is ours
    cam_up = cam.rotation_quaternion @ Vector((0, 1, 0))
    from mathutils import Quaternion

    angle = cam_up.angle(up) if cam_up.length and up.length else 0.0
    if cam_up.cross(up).dot(-direction) < 0:
        angle = -angle
    cam.rotation_quaternion = Quaternion(-direction, angle) @ cam.rotation_quaternion
    scene.camera = cam

    scene.render.use_freestyle = True
    scene.render.line_thickness_mode = "ABSOLUTE"
    scene.render.line_thickness = float(spec.get("outline", 2))
    layer = scene.view_layers[0]
    layer.use_freestyle = True
    sets = layer.freestyle_settings.linesets
    lines = sets[0] if len(sets) else sets.new("outlines")
    for extra in list(sets)[1:]:
        sets.remove(extra)
    lines.select_by_edge_types = True
    lines.select_silhouette = lines.select_border = lines.select_material_boundary = True
    lines.select_crease = False
    if lines.linestyle is None:  # an empty factory scene makes the lineset without a style
        lines.linestyle = bpy.data.linestyles.new("black")
    lines.linestyle.color = (0, 0, 0)
    lines.linestyle.thickness = float(spec.get("outline", 2))
    scene.render.filepath = spec["out"]
    scene.render.image_settings.file_format = "PNG"
    bpy.ops.render.render(write_still=True)


if __name__ == "__main__":
    argv = sys.argv[sys.argv.index("--") + 1 :] if "--" in sys.argv else sys.argv[1:]
    with open(argv[0]) as f:
        build_and_render(json.load(f))
