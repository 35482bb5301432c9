import gzip
import numpy as np
import nearscape as ns

# Load: Fashion-MNIST's 10,000 test images (Debian's dataset-fashion-mnist), uint8 as they are.
folder = "/usr/share/datasets/fashion-mnist"
with gzip.open(f"{folder}/t10k-images-idx3-ubyte.gz") as f:
    x = np.frombuffer(f.read(), np.uint8, offset=16).reshape(-1, 784)
with gzip.open(f"{folder}/t10k-labels-idx1-ubyte.gz") as f:
    labels = np.frombuffer(f.read(), np.uint8, offset=8)

# Graph: each image's 15 nearest others, exact (uint8 is converted to float32 once).
ids, dist = ns.knn_graph(x, k=15, seed=1)
edges = ns.knn_graph(x, k=15, seed=1, as_frame=True)
print(edges.head(3))
print("neighbours with the same label:", (labels[ids] == labels[:, None]).mean().round(3))

# Search: an index over the images, pickled as joblib would send it to a worker.
import pickle
index = ns.GraphIndex.build(x, degree=32, seed=1)
print(index)
found, _ = pickle.loads(pickle.dumps(index)).search(x[:3], k=4, ef=64, threads=2)
print(found)

# Map: the same seed gives the same map on any number of threads.
xy = ns.layout(x, graph=(ids, dist), seed=1)
print("map:", xy.shape, "same on 1 thread:", np.array_equal(xy, ns.layout(x, graph=(ids, dist), seed=1, threads=1)))

# Plot: matplotlib in the notebook, and the explorer's own picture (no desktop needed).
names = np.array(["T-shirt", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt",
                  "Sneaker", "Bag", "Ankle boot"])
ax = ns.plot_map(xy, labels=names[labels], title="Fashion-MNIST, 10,000 test images")
ax.figure.savefig("map.png", dpi=100)
picture = ns.show(x, metadata={"label": names[labels]}, inline=True)
picture.save("explorer.png")
print(picture)
print(ns.outliers(x, k=15, as_frame=True).head(3))
