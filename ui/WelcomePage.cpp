#include "WelcomePage.h"

#include "nearscape/io/DatasetReader.h"

#include <QFileInfo>
#include <QLabel>
#include <QPushButton>
#include <QVBoxLayout>

namespace nearscape::ui {

WelcomePage::WelcomePage(QWidget* parent)
    : QWidget(parent), m_examples(new QLabel(this)), m_example(new QPushButton(this)) {
  auto* layout = new QVBoxLayout(this);
  layout->addStretch(2);
  auto* title = new QLabel(tr("<h2>Nearscape</h2>"), this);
  title->setAlignment(Qt::AlignCenter);
  layout->addWidget(title);
  auto* how =
      new QLabel(tr("Open a file of embeddings — .npy, .fvecs/.bvecs/.ivecs, ann-benchmarks "
                    ".hdf5, TensorBoard .tsv, or an MNIST-style IDX folder — or drop one "
                    "here."),
                 this);
  how->setWordWrap(true);
  how->setAlignment(Qt::AlignCenter);
  layout->addWidget(how);
  auto* open = new QPushButton(tr("Open a File…"), this);
  open->setObjectName(QStringLiteral("welcomeOpen"));
  connect(open, &QPushButton::clicked, this, &WelcomePage::openFileAsked);
  auto* buttons = new QHBoxLayout;
  buttons->addStretch();
  buttons->addWidget(open);
  buttons->addWidget(m_example);
  buttons->addStretch();
  layout->addLayout(buttons);
  m_example->setObjectName(QStringLiteral("welcomeExample"));
  connect(m_example, &QPushButton::clicked, this, &WelcomePage::openExampleAsked);
  m_examples->setWordWrap(true);
  m_examples->setAlignment(Qt::AlignCenter);
  m_examples->setTextInteractionFlags(Qt::TextSelectableByMouse);
  m_examples->setObjectName(QStringLiteral("welcomeExamples"));
  layout->addWidget(m_examples);
  layout->addStretch(3);
  refresh();
}

void WelcomePage::refresh() {
  const bool installed = QFileInfo::exists(QString::fromStdString(defaultDatasetPath().string()));
  m_example->setText(tr("Open Fashion-MNIST"));
  m_example->setVisible(installed);
  m_examples->setText(installed ? tr("The example data set, Fashion-MNIST (70,000 images), is "
                                     "installed.")
                                : tr("To try the example data set, Fashion-MNIST (70,000 images), "
                                     "install Debian's package: sudo apt install "
                                     "dataset-fashion-mnist"));
}

} // namespace nearscape::ui
