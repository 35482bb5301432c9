#pragma once
/// @file Nearscape.h
/// The facade the UI and the CLI include: everything public, nothing internal or CUDA.

#include "nearscape/analysis/DistinctOutliers.h"
#include "nearscape/analysis/Duplicates.h"
#include "nearscape/analysis/NeighbourhoodScores.h"
#include "nearscape/cluster/KMeans.h"
#include "nearscape/core/BlasKernels.h"
#include "nearscape/core/Context.h"
#include "nearscape/core/Dataset.h"
#include "nearscape/core/Error.h"
#include "nearscape/core/ItemSearch.h"
#include "nearscape/core/JobControl.h"
#include "nearscape/core/Log.h"
#include "nearscape/core/Matrix.h"
#include "nearscape/core/Metric.h"
#include "nearscape/core/Neighbours.h"
#include "nearscape/core/Norms.h"
#include "nearscape/core/Sampling.h"
#include "nearscape/gpu/DeviceWarmUp.h"
#include "nearscape/gpu/Devices.h"
#include "nearscape/gpu/Norms.h"
#include "nearscape/graph/Graph.h"
#include "nearscape/index/AnnIndex.h"
#include "nearscape/index/HeldOutSweep.h"
#include "nearscape/index/Sweep.h"
#include "nearscape/index/SweepStudy.h"
#include "nearscape/io/ArtefactCache.h"
#include "nearscape/io/DatasetReader.h"
#include "nearscape/io/GraphFile.h"
#include "nearscape/io/MappedFile.h"
#include "nearscape/io/Npy.h"
#include "nearscape/knn/CrossNearest.h"
#include "nearscape/knn/Distributed.h"
#include "nearscape/knn/Knn.h"
#include "nearscape/knn/NnDescent.h"
#include "nearscape/layout/FarInMap.h"
#include "nearscape/layout/GraphLayout.h"
#include "nearscape/layout/Pca.h"
#include "nearscape/layout/PointGrid.h"
#include "nearscape/pipeline/Explore.h"

namespace nearscape {
/// The engine's version, "MAJOR.MINOR.PATCH".
const char* engineVersion();
} // namespace nearscape
