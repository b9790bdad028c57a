"""The zoo's timm part: CNN families that torchvision lacks, built by timm with random weights.

tools/zoo/export.py merges TIMM into its ZOO table (the same tuple: constructor, input side,
opset, keep BatchNormalization nodes, what the model stands for), so every convention of the zoo
holds: a fixed seed per model, BatchNorm statistics re-estimated on random images, a dynamic batch
axis. The names are timm's with a "timm_" prefix. timm is not a Debian package: tools/setup.sh
installs the version pinned in third_party/timm/requirements.txt into third_party/timm/venv, a
venv over Debian's site packages (its torch and torchvision), so these models export with

    third_party/timm/venv/bin/python tools/zoo/export.py --timm --out build/zoo-timm

Under /usr/bin/python3 (no timm) export.py lists them and leaves them out of a full export.

Every model runs at 224 px (timm's own default is 256 for the CSP ones, ECA-ResNet-26-T,
GC-ResNeXt-26-TS, MobileNetV4-Medium and FastViT-T8, 192 for NF-RegNet-B0, 299 for Inception-v4
and Xception-41): the survey runs each through FP32, static and dynamic INT8 on a shared 2-core
machine, and 224 px keeps the largest under a few seconds a run without changing what the graph
holds. The test suite's copies (`export.py --timm --small`, which tools/test.sh runs with the
venv's python into build/zoo beside torchvision's small models) are the same nets at SMALL_SIDE
px: every block, weight and op of the 224-px graph, at about a twelfth of its work, so the zoo
checks (tests/parity/test_zoo_parity.cc) cover all 35 families in CI in seconds.
"""
import importlib

# Opset 13 unless a pattern needs more: 14 exports HardSwish as one node (else
# HardSigmoid-Mul), 17 exports LayerNorm as LayerNormalization.
# timm name: (opset, what it stands for)
MODELS = {
    "ghostnet_100": (13, "Ghost modules: cheap depthwise features Concat-ed to a 1x1's, sliced to width; SE with HardSigmoid"),
    "ghostnetv2_100": (13, "GhostNetV2's DFC attention: 2x2 AvgPool, 1x5 and 5x1 depthwise, Sigmoid gate, nearest Resize back"),
    "repghostnet_050": (13, "RepGhost (train form): an identity-BatchNorm branch added to the cheap depthwise one, 0.5 width"),
    "rexnet_100": (13, "ReXNet: residual Add on the first channels only (Slice, Add, Concat), SiLU and ReLU6, SE"),
    "hrnet_w18_small": (13, "HRNet: parallel branches at 4 resolutions fused by strided 3x3s and nearest 2x/4x/8x Resize"),
    "dla34": (13, "DLA: iterative and tree aggregation nodes (Concat of levels, 1x1 conv, residual)"),
    "dpn68": (13, "Dual Path Net: grouped 3x3 bottlenecks, residual Add on a Slice, dense Concat of the rest"),
    "cspresnet50": (13, "CSPNet on ResNet bottlenecks: cross-stage Split, Concat, LeakyReLU(0.01)"),
    "cspdarknet53": (13, "CSPDarkNet-53: Darknet residuals in cross-stage partial stages, LeakyReLU, 27 M params"),
    "cs3darknet_focus_s": (13, "CSP3 DarkNet (YOLOv5's backbone): a 6x6 stride-2 stem conv (what replaced Focus), SiLU, C3-style Split stages"),
    "repvgg_a0": (13, "RepVGG (train form): 3x3, 1x1 and identity-BatchNorm branches Add-ed in every block"),
    "mobileone_s0": (13, "MobileOne S0 reparameterized for deployment (timm's reparameterize_model): plain conv-ReLU stacks"),
    "resnest14d": (13, "ResNeSt split attention: radix-2 grouped convs, Softmax over the radix (Reshape-Transpose), AvgPool downsample"),
    "res2net50_26w_4s": (13, "Res2Net: a 1x1's output Split in 4, 3x3s chained on accumulated splits, Concat"),
    "selecsls42b": (13, "SelecSLS: selective long and short skip Concats, 3x3 stride-2 transitions"),
    "tresnet_m": (13, "TResNet: SpaceToDepth stem (Reshape-Transpose), anti-aliased blur downsampling (fixed depthwise), LeakyReLU, SE"),
    "ese_vovnet19b_dw": (13, "VoVNet: one-shot aggregation (one Concat of every layer), depthwise, eSE with HardSigmoid"),
    "mixnet_s": (13, "MixNet: mixed kernel sizes (Split, 3x3/5x5/7x7/9x9 depthwise, Concat), grouped 1x1s, SiLU and ReLU"),
    "lcnet_100": (14, "PP-LCNet: HardSwish, 5x5 depthwise, SE only at the end, a 1280-wide 1x1 conv head after pooling"),
    "fbnetc_100": (13, "FBNet-C: NAS inverted residuals with 3x3/5x5 depthwise and expansion 1/3/6, ReLU"),
    "tf_efficientnet_lite0": (13, "EfficientNet-Lite0 as TF trains it: 'SAME' padding (asymmetric Pad before strided convs), ReLU6, no SE"),
    "mobilenetv4_conv_small": (14, "MobileNetV4-Conv-Small: universal inverted bottlenecks (optional depthwise before and after), ReLU"),
    "mobilenetv4_conv_medium": (14, "MobileNetV4-Conv-Medium: UIB with ExtraDW blocks, fused-IB stem, 5x5 depthwise"),
    "resnet26d": (13, "ResNet-D: 3-conv deep stem, AvgPool (ceil, count_include_pad=0) before the strided shortcuts"),
    "seresnext26d_32x4d": (13, "SE-ResNeXt-26-D: 32-group 3x3 bottlenecks with SE, deep stem, AvgPool shortcuts"),
    "skresnet18": (13, "Selective Kernel: two branches (3x3 and dilated 3x3), Softmax across the branches as attention"),
    "ecaresnet26t": (13, "ECA: a 1-D Conv over the pooled channels (Reshape to N x 1 x C), tiered stem"),
    "gcresnext26ts": (17, "Global Context: Softmax over H*W as attention pooling (MatMul), LayerNorm over channels, SiLU"),
    "nf_regnet_b0": (13, "Normalizer-free RegNet: no BatchNorm, scaled weight standardization, SiLU with gains, SE"),
    "hgnetv2_b0": (13, "PP-HGNetV2: stem with asymmetric Pad and ceil MaxPool, light conv blocks, learnable affine after ReLU, ESE"),
    "gernet_s": (13, "GENet (ByobNet): basic, bottleneck and depthwise-bottleneck stages, 1920-wide 1x1 head"),
    "xception41": (13, "Aligned Xception: separable convs (depthwise 3x3 then 1x1) in entry, middle and exit flows"),
    "inception_v4": (13, "Inception-v4: 1x7/7x1 and 1x3/3x1 factorized convs, pool branches, 42 M params"),
    "efficientnet_b0_gn": (13, "EfficientNet-B0 with GroupNorm instead of BatchNorm (InstanceNormalization on a Reshape)"),
    "fastvit_t8": (13, "FastViT-T8: RepMixer (train form: depthwise conv branches), layer scale, ConvFFN with 7x7 depthwise, GELU"),
}
# Reparameterized after BatchNorm re-estimation, as the models are deployed.
REPARAMETERIZE = {"mobileone_s0"}
SIDE = 224
# The test suite's side: every family downsamples 32x, leaving 2x2 maps at 64 px; Inception-v4's
# unpadded stem and reductions need 75 px for a 1x1 map, so it runs at 96 (2x2 again).
SMALL_SIDE = 64
SMALL_SIDES = {"inception_v4": 96}


def available():
    """timm's version, or None when this Python has no timm."""
    try:
        return importlib.import_module("timm").__version__
    except ImportError:
        return None


def create(timm_name):
    timm = importlib.import_module("timm")
    # exportable: timm picks layers that trace to plain ONNX (no custom autograd activations,
    # static 'SAME' padding).
    return timm.create_model(timm_name, pretrained=False, exportable=True)


def finalize(zoo_name, model):
    """The deploy form of a reparameterizable model, after its BatchNorm statistics are set."""
    if zoo_name[len("timm_"):] in REPARAMETERIZE:
        from timm.utils.model import reparameterize_model
        return reparameterize_model(model)
    return model


def randomize_layer_scale(model, gen):
    """timm's layer scales start near zero (1e-5), which makes those blocks identities; a trained
    network's are of order 0.1-1, so draw them there, per channel."""
    import torch
    for m in model.modules():
        if "LayerScale" in type(m).__name__:
            with torch.no_grad():
                for p in m.parameters(recurse=False):
                    p.uniform_(0.1, 1.0, generator=gen)


def zoo_entries(small=False):
    """ZOO's rows: timm_NAME -> (constructor, side, opset, keep BatchNormalization, what); small:
    at SMALL_SIDE px, the test suite's copies."""
    def side(n):
        return SMALL_SIDES.get(n, SMALL_SIDE) if small else SIDE

    def note(n):
        return f" (at {side(n)} px, the test suite's copy)" if small else ""

    return {f"timm_{n}": ((lambda n=n: create(n)), side(n), opset, False, what + note(n))
            for n, (opset, what) in MODELS.items()}
