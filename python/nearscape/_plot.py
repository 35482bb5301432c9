"""nearscape.plot_map: a map (layout's n × 2 positions) as a matplotlib scatter, for notebooks."""

import numpy as np


def _matplotlib_pyplot():
    try:
        import matplotlib.pyplot as plt
    except ImportError:
        raise ImportError("plot_map needs matplotlib: install python3-matplotlib (Debian) or "
                          "`pip install matplotlib`; or use nearscape.show(x, inline=True) for "
                          "the explorer's own picture") from None
    return plt


def plot_map(xy, labels=None, *, ax=None, size=None, title=None, legend=True, cmap=None):
    """Draws a map (n × 2 positions, e.g. from layout) as a scatter plot and returns the
    matplotlib Axes.

    labels: n values colouring the points: categories (strings, or at most 20 distinct
    integers) get a colour each and a legend; other numbers a colour scale with a colour bar.
    ax: the Axes to draw in (default: a new figure's). size: the points' size (default from n).
    matplotlib is imported only here; without it the call raises ImportError saying how to
    install it.
    """
    positions = np.asarray(xy)
    if positions.ndim != 2 or positions.shape[1] != 2:
        raise ValueError(f"xy: expected n × 2 positions (a 2-D map), got shape "
                         f"{positions.shape}")
    n = positions.shape[0]
    plt = _matplotlib_pyplot()
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 6))
    size = size if size is not None else max(0.5, min(20.0, 20000.0 / max(n, 1)))
    common = dict(s=size, linewidths=0)
    if labels is None:
        ax.scatter(positions[:, 0], positions[:, 1], **common)
    else:
        values = np.asarray(labels)
        if values.shape[0] != n:
            raise ValueError(f"labels: {values.shape[0]} values for {n} points")
        numeric = np.issubdtype(values.dtype, np.number) or values.dtype == bool
        categories = np.unique(values)
        if numeric and not (np.issubdtype(values.dtype, np.integer) and len(categories) <= 20):
            drawn = ax.scatter(positions[:, 0], positions[:, 1], c=values,
                               cmap=cmap or "viridis", **common)
            ax.figure.colorbar(drawn, ax=ax)
        else:
            palette = plt.get_cmap(cmap or ("tab10" if len(categories) <= 10 else "tab20"))
            for i, category in enumerate(categories):
                chosen = values == category
                ax.scatter(positions[chosen, 0], positions[chosen, 1],
                           color=palette(i % palette.N), label=str(category), **common)
            if legend and len(categories) <= 30:
                ax.legend(markerscale=max(1.0, 6.0 / np.sqrt(size)), fontsize="small",
                          loc="best", frameon=False)
    ax.set_aspect("equal", adjustable="datalim")
    ax.set_xticks([])
    ax.set_yticks([])
    if title:
        ax.set_title(title)
    return ax
