"""Components: one module per layer of the stack, in ``app.COMPONENTS`` order.

Each module's ``build(chart, ctx)`` adds its Kubernetes objects to its own cdk8s Chart and
returns a ``Contribution`` (Helm releases, feature gates, README notes, extra files); helper
modules (``alerts``, ``dcgm_exporter``) serve one component.
"""
