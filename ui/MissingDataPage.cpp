#include "MissingDataPage.h"

#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QVBoxLayout>

namespace nearscape::ui {

MissingDataPage::MissingDataPage(QWidget* parent)
    : QWidget(parent), m_text(new QLabel(this)), m_locate(new QPushButton(this)),
      m_back(new QPushButton(this)) {
  setObjectName(QStringLiteral("missingDataPage"));
  auto* layout = new QVBoxLayout(this);
  layout->addStretch(2);
  auto* title = new QLabel(tr("<h2>The session's data cannot be opened</h2>"), this);
  title->setAlignment(Qt::AlignCenter);
  layout->addWidget(title);
  m_text->setObjectName(QStringLiteral("missingDataText"));
  m_text->setTextFormat(Qt::PlainText); // it quotes file names and errors
  m_text->setWordWrap(true);
  m_text->setAlignment(Qt::AlignCenter);
  m_text->setTextInteractionFlags(Qt::TextSelectableByMouse);
  layout->addWidget(m_text);
  m_locate->setText(tr("Locate the Data File…"));
  m_locate->setObjectName(QStringLiteral("locateButton"));
  m_locate->setDefault(true);
  connect(m_locate, &QPushButton::clicked, this, &MissingDataPage::locateAsked);
  m_back->setObjectName(QStringLiteral("dismissButton"));
  connect(m_back, &QPushButton::clicked, this, &MissingDataPage::dismissed);
  auto* buttons = new QHBoxLayout;
  buttons->addStretch();
  buttons->addWidget(m_locate);
  buttons->addWidget(m_back);
  buttons->addStretch();
  layout->addLayout(buttons);
  layout->addStretch(3);
}

void MissingDataPage::setProblem(const QString& sessionPath, const QString& dataPath,
                                 const QString& reason, bool canGoBack) {
  m_text->setText(tr("Session %1 names the data file\n%2\n\n%3\n\nLocate the file where it is "
                     "now: the session is restored when its content is the same (the same "
                     "content hash).")
                      .arg(QFileInfo(sessionPath).fileName(), dataPath, reason));
  m_back->setText(canGoBack ? tr("Back to the Open Data") : tr("Close the Session"));
}

QString MissingDataPage::text() const {
  return m_text->text();
}

} // namespace nearscape::ui
