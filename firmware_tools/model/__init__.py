"""Model building: data encoding, network definition, training, distillation, conversion, bundling."""
