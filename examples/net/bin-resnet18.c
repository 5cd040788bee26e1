/*
 * A binary ResNet-18 in the style of Bi-Real Net (Liu et al. 2018): the ResNet-18
 * shape, every 3x3 convolution of the four stages binary, and every binary
 * convolution with its own real-valued shortcut:
 *
 *   x (float) -> sign -> binary 3x3 convolution -> batch norm (folded: float out)
 *             -> + shortcut(x)  -> next x (float)
 *
 * The binary convolution pads with zeros (GEMMI8_BIN_ZERO_PADDING), as the float
 * convolution of the trained network does on its sign()ed input.
 *
 * Shortcuts: x itself, or, where the convolution halves the map and doubles the
 * channels (the first of stages 2-4), the paper's real-valued downsampling: 2x2
 * average pooling with stride 2, then a 1x1 convolution and batch norm. Here the 1x1
 * convolution runs in int8: the pooled floats are quantized to uint8 (a calibrated
 * scale and zero point), convolved by gemmi8's qu8s8 convolution with int32 output
 * (its batch norm folded into per-channel weight scales and an int32 bias), and the
 * accumulators dequantized to float (x_scale * w_scale[c]).
 *
 * The rest as in the int8 ResNet-18 but for the stem's ReLU, which Bi-Real Net leaves
 * out (the first block's sign() would see nothing but zeros and positives): the stem
 * (7x7/2 convolution with its batch norm, 3x3/2 max pool) in uint8, the pool's maxima
 * dequantized to float for the first block; at the end, global
 * average pooling in float, and the classifier as the int8 networks run it: the 512
 * averages quantized to uint8 and a qu8s8 GEMM to 1000 uint8 logits.
 */
#include "net-impl.h"

/* One block: one binary convolution with its shortcut (sign, bconv with stride s, batch
 * norm, + shortcut). The ResNet-18 shape has two 3x3 convolutions in each of two basic
 * blocks a stage; Bi-Real Net's code makes them four blocks of one. */
static size_t binary_block(gnet* net, size_t x, size_t channels, size_t stride, int layer,
                           int block)
{
  size_t bits = gnet_binarize(net, x, "layer%d.%d.binarize", layer, block);
  size_t shortcut = x;
  if (stride != 1 || gnet_channels(net, x) != channels) {
    size_t p = gnet_avgpool(net, x, stride, "layer%d.%d.avgpool", layer, block);
    p = gnet_quantize(net, p, "layer%d.%d.quantize", layer, block);
    p = gnet_conv_s32(net, p, channels, 1, 1, "layer%d.%d.downsample", layer, block);
    shortcut = gnet_dequantize(net, p, "layer%d.%d.dequantize", layer, block);
  }
  /* the batch norm's output added to the shortcut in the convolution's output stage,
   * in place (x is not read after its sign bits and the shortcut are taken) */
  return gnet_bconv_add(net, bits, shortcut, channels, 3, stride, "layer%d.%d.bconv", layer,
                        block);
}

void gnet_build_bin_resnet18(gnet* net)
{
  static const struct {
    size_t channels, stride;
  } layers[4] = {{64, 1}, {128, 2}, {256, 2}, {512, 2}};

  size_t x = gnet_input_tensor(net, 224, 224, 3, 1.0f / 64.0f, 128);
  x = gnet_conv(net, x, 64, 7, 2, 1, GNET_LINEAR, "conv1");
  x = gnet_maxpool_f32(net, x, 3, 2, 1, "maxpool");
  for (int i = 0; i < 4; i++) {
    for (int b = 0; b < 4; b++) {
      x = binary_block(net, x, layers[i].channels, b == 0 ? layers[i].stride : 1, i + 1, b);
    }
  }
  x = gnet_gap(net, x, "gap");
  x = gnet_quantize(net, x, "quantize");
  net->output = gnet_fc(net, x, 1000, "fc");
}
