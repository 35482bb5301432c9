#include "PreferencesDialog.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QSpinBox>

namespace nearscape::ui {

PreferencesDialog::PreferencesDialog(const Preferences& current, QWidget* parent)
    : QDialog(parent), m_shown(new QSpinBox(this)), m_graphK(new QSpinBox(this)),
      m_method(new QComboBox(this)), m_backend(new QComboBox(this)), m_devices(new QLineEdit(this)),
      m_devicesError(new QLabel(this)), m_cache(new QDoubleSpinBox(this)) {
  setWindowTitle(tr("Preferences"));
  auto* form = new QFormLayout(this);
  m_shown->setRange(1, 1000);
  m_shown->setValue(current.shownNeighbours);
  m_shown->setObjectName(QStringLiteral("shownNeighbours"));
  form->addRow(tr("Neighbours listed"), m_shown);
  m_graphK->setRange(2, 200);
  m_graphK->setValue(current.graphK);
  m_graphK->setObjectName(QStringLiteral("graphK"));
  m_graphK->setToolTip(tr("Neighbours per item in the kNN graph behind the map and the paths"));
  form->addRow(tr("Graph k"), m_graphK);
  for (const auto& [method, text] :
       {std::pair{GraphMethod::Auto, tr("auto (the cheaper for the data)")},
        std::pair{GraphMethod::Exact, tr("exact")},
        std::pair{GraphMethod::NnDescent, tr("NN-Descent")}})
    m_method->addItem(text, int(method));
  m_method->setCurrentIndex(m_method->findData(int(current.graphMethod)));
  m_method->setObjectName(QStringLiteral("graphMethod"));
  form->addRow(tr("Graph method"), m_method);
  for (const auto& [backend, text] :
       {std::pair{Backend::Auto, tr("auto (the GPU when usable)")},
        std::pair{Backend::Cpu, tr("CPU")}, std::pair{Backend::Cuda, tr("CUDA")}})
    m_backend->addItem(text, int(backend));
  m_backend->setCurrentIndex(m_backend->findData(int(current.backend)));
  m_backend->setObjectName(QStringLiteral("backend"));
  form->addRow(tr("Backend"), m_backend);
  m_devices->setText(current.devices);
  m_devices->setPlaceholderText(tr("the first GPU"));
  m_devices->setObjectName(QStringLiteral("devices"));
  m_devices->setToolTip(tr("Several GPUs split the work: \"all\", or ordinals such as 0,1"));
  form->addRow(tr("GPUs"), m_devices);
  m_devicesError->setObjectName(QStringLiteral("devicesError"));
  m_devicesError->setWordWrap(true);
  m_devicesError->setStyleSheet(QStringLiteral("color: #b00020"));
  m_devicesError->hide();
  form->addRow(QString(), m_devicesError);
  m_cache->setRange(0, 100000);
  m_cache->setDecimals(1);
  m_cache->setSuffix(tr(" GB"));
  m_cache->setValue(current.cacheGigabytes);
  m_cache->setObjectName(QStringLiteral("cacheGigabytes"));
  m_cache->setToolTip(tr("Graphs and maps kept for instant reopening; 0 keeps none"));
  form->addRow(tr("Cache size"), m_cache);
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
  connect(buttons, &QDialogButtonBox::accepted, this, [this] {
    // A GPU list this machine cannot serve is said here, before it is kept.
    Context probe;
    probe.backend = Backend(m_backend->currentData().toInt());
    try {
      applyDevices(probe, m_devices->text());
    } catch (const std::exception& e) {
      m_devicesError->setText(QString::fromStdString(e.what()));
      m_devicesError->show();
      return;
    }
    accept();
  });
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  form->addRow(buttons);
}

Preferences PreferencesDialog::preferences() const {
  Preferences p;
  p.shownNeighbours = m_shown->value();
  p.graphK = m_graphK->value();
  p.graphMethod = GraphMethod(m_method->currentData().toInt());
  p.backend = Backend(m_backend->currentData().toInt());
  p.devices = m_devices->text().trimmed();
  p.cacheGigabytes = m_cache->value();
  return p;
}

} // namespace nearscape::ui
