"""fuserun: fusec artifacts from Python, over libfuserun with ctypes.

    import torch, fuserun
    art = fuserun.load("generated/softmax.manifest")    # torch's current CUDA device
    y = art(x)                                           # fused; art(x, variant="unfused")
    ref = fuserun.reference("generated/softmax.manifest")
    y64 = ref(x.cpu().numpy())                           # the float64 reference, NumPy

See runtime/README.md ("Python")."""
from ._lib import FuserunError
from .artifact import Artifact
from .manifest import Manifest

__version__ = "0.1.0"
__all__ = ["Artifact", "FuserunError", "Manifest", "load", "reference"]


def load(path, device=None):
    """The artifact at path (a .manifest, or a fusion name: generated/NAME.manifest) on a CUDA device."""
    return Artifact(path, device)


def reference(path):
    """The artifact's float64 reference, compiled with the system C compiler, on NumPy arrays."""
    from ._ref import Reference
    return Reference(path)
