/*
 * MobileNetV2 (Sandler et al. 2018; torchvision's mobilenet_v2, width 1.0, 224 x 224),
 * quantized as ONNX Runtime's quantizer writes it: every convolution a QLinearConv
 * with its batch norm folded, ReLU6 folded into the output quantization (zero point 0,
 * scale 6/255), the linear bottlenecks' outputs and the residual sums (QLinearAdd)
 * with a calibrated scale and zero point.
 *
 * Stem 3x3/2 to 32 channels, ReLU6; 17 inverted residual blocks (the table: expansion
 * t, output channels c, repeats n, stride s of the first); 1x1 to 1280, ReLU6; global
 * average pool; classifier of 1000 classes.
 */
#include "net-impl.h"

/* expand 1x1 (t > 1), depthwise 3x3/s, project 1x1 (linear), add when the shape stays */
static size_t inverted_residual(gnet* net, size_t x, size_t expansion, size_t channels,
                                size_t stride, int index)
{
  const size_t cin = gnet_channels(net, x);
  size_t y = x;
  if (expansion != 1) {
    y = gnet_conv(net, y, cin * expansion, 1, 1, 1, GNET_RELU6, "block%d.expand", index);
  }
  y = gnet_conv(net, y, cin * expansion, 3, stride, cin * expansion, GNET_RELU6, "block%d.dw",
                index);
  y = gnet_conv(net, y, channels, 1, 1, 1, GNET_LINEAR, "block%d.project", index);
  if (stride == 1 && cin == channels) y = gnet_qadd(net, y, x, GNET_LINEAR, "block%d.add", index);
  return y;
}

void gnet_build_mobilenetv2(gnet* net)
{
  static const struct {
    size_t t, c, n, s;
  } blocks[7] = {
      {1, 16, 1, 1}, {6, 24, 2, 2}, {6, 32, 3, 2}, {6, 64, 4, 2},
      {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1},
  };

  size_t x = gnet_input_tensor(net, 224, 224, 3, 1.0f / 64.0f, 128);
  x = gnet_conv(net, x, 32, 3, 2, 1, GNET_RELU6, "stem");
  int index = 1;
  for (int i = 0; i < 7; i++) {
    for (size_t r = 0; r < blocks[i].n; r++) {
      x = inverted_residual(net, x, blocks[i].t, blocks[i].c, r == 0 ? blocks[i].s : 1, index++);
    }
  }
  x = gnet_conv(net, x, 1280, 1, 1, 1, GNET_RELU6, "head");
  x = gnet_gap(net, x, "gap");
  net->output = gnet_fc(net, x, 1000, "fc");
}
