#pragma once
// CUDA test rows skip, with the reason, where no device is usable (CI has none). QSKIP must run
// in the test function itself, hence a macro.

#include "nearscape/gpu/Devices.h"

#include <QString>
#include <QTest>

#define SKIP_WITHOUT_DEVICE(backend)                                                               \
  do {                                                                                             \
    if ((backend) == ::nearscape::Backend::Cuda && !::nearscape::queryDevice(0).usable)            \
      QSKIP(qPrintable("no usable CUDA device: " +                                                 \
                       QString::fromStdString(::nearscape::queryDevice(0).reason)));               \
  } while (false)
