#pragma once
// Edit → Preferences: the settings of ui/Preferences.h, each with its control.

#include "Preferences.h"

#include <QDialog>

class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QSpinBox;

namespace nearscape::ui {

class PreferencesDialog : public QDialog {
  Q_OBJECT
public:
  PreferencesDialog(const Preferences& current, QWidget* parent = nullptr);
  /// What the controls say now.
  Preferences preferences() const;

private:
  QSpinBox* m_shown;
  QSpinBox* m_graphK;
  QComboBox* m_method;
  QComboBox* m_backend;
  QLineEdit* m_devices;
  QLabel* m_devicesError; ///< why the GPU list cannot be used (OK then keeps the dialog open)
  QDoubleSpinBox* m_cache;
};

} // namespace nearscape::ui
