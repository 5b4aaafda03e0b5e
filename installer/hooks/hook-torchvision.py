"""PyInstaller hook for torchvision (overrides the contrib hook, which names `torchvision._C`).

torchvision >= 0.29 ships its operators as `_C_stable.so` / `image_stable.so` and loads them with
`torch.ops.load_library`, not `import`, so the contrib hook's hidden import finds nothing and the frozen app fails
with "operator torchvision::nms does not exist" (found by the post-build model check). Collect the libraries as
binaries; their own dependencies (torchvision.libs/) follow through binary analysis.
"""
from PyInstaller.utils.hooks import collect_dynamic_libs

binaries = collect_dynamic_libs("torchvision", search_patterns=["*.so", "*.so.*", "*.pyd", "*.dll", "*.dylib"])
hiddenimports = []
module_collection_mode = "pyz+py"  # torchvision's ops are scripted/traced: keep sources, as the contrib hook does
