"""torch_transpose inside a compiled model: forward, backward and an optimizer step under
torch.compile(fullgraph=True), checked against eager. Runs on CUDA if present, else CPU.

    python examples/python/compiled_model.py
"""
import torch
import torch.nn as nn

import torch_transpose as tt


class ChannelMixer(nn.Module):
    """Mixes along the sequence axis by transposing (batch, seq, width) <-> (batch, width, seq)."""

    def __init__(self, seq, width):
        super().__init__()
        self.norm = nn.LayerNorm(width)
        self.mix = nn.Linear(seq, seq)

    def forward(self, x):
        h = tt.transpose(self.norm(x), 1, 2)      # (batch, width, seq), contiguous
        h = self.mix(h)
        return x + tt.permute(h, [0, 2, 1])       # back to (batch, seq, width)


def main():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    torch.manual_seed(0)
    model = ChannelMixer(seq=64, width=32).to(device)
    compiled = torch.compile(model, fullgraph=True)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for step in range(3):
        x = torch.randn(8, 64, 32, device=device)
        loss = compiled(x).square().mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        with torch.no_grad():
            torch.testing.assert_close(compiled(x), model(x))
        print(f"step {step}: loss {loss.item():.4f}")
    print(f"compiled model with torch_transpose ops matches eager on {device}")


if __name__ == "__main__":
    main()
