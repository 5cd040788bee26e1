/*
 * ResNet-18 (He et al. 2016; torchvision's resnet18), quantized as ONNX Runtime's
 * quantizer writes it: every convolution a QLinearConv with its batch norm folded, its
 * ReLU folded into the output quantization (zero point 0), the residual sum a
 * QLinearAdd with the block's ReLU folded the same way.
 *
 *   conv1    7x7/2, 64, ReLU                  224 -> 112
 *   maxpool  3x3/2, padding 1                 112 -> 56
 *   layer1-4 two basic blocks each: 64, 128, 256, 512 channels, the first block of
 *            layers 2-4 with stride 2 and a 1x1/2 convolution on its shortcut
 *                                             56 -> 56 -> 28 -> 14 -> 7
 *   gap      global average pool              7x7x512 -> 512
 *   fc       1000 classes
 */
#include "net-impl.h"

/* conv3x3-ReLU, conv3x3, (shortcut: 1x1 convolution when the shape changes), add-ReLU */
static size_t basic_block(gnet* net, size_t x, size_t channels, size_t stride, int layer,
                          int block)
{
  size_t y = gnet_conv(net, x, channels, 3, stride, 1, GNET_RELU, "layer%d.%d.conv1", layer,
                       block);
  y = gnet_conv(net, y, channels, 3, 1, 1, GNET_LINEAR, "layer%d.%d.conv2", layer, block);
  size_t shortcut = x;
  if (stride != 1 || gnet_channels(net, x) != channels) {
    shortcut = gnet_conv(net, x, channels, 1, stride, 1, GNET_LINEAR, "layer%d.%d.downsample",
                         layer, block);
  }
  return gnet_qadd(net, y, shortcut, GNET_RELU, "layer%d.%d.add", layer, block);
}

void gnet_build_resnet18(gnet* net)
{
  static const struct {
    size_t channels, stride;
  } layers[4] = {{64, 1}, {128, 2}, {256, 2}, {512, 2}};

  /* uint8 input: an image normalized to about [-2, 2] */
  size_t x = gnet_input_tensor(net, 224, 224, 3, 1.0f / 64.0f, 128);
  x = gnet_conv(net, x, 64, 7, 2, 1, GNET_RELU, "conv1");
  x = gnet_maxpool(net, x, 3, 2, 1, "maxpool");
  for (int i = 0; i < 4; i++) {
    x = basic_block(net, x, layers[i].channels, layers[i].stride, i + 1, 0);
    x = basic_block(net, x, layers[i].channels, 1, i + 1, 1);
  }
  x = gnet_gap(net, x, "gap");
  net->output = gnet_fc(net, x, 1000, "fc");
}
