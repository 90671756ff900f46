"""What verify wrote on an object, read in a test's assertions."""

from shared.contracts.models import ObjectVerification, PageObject


def verification(o: PageObject) -> ObjectVerification:
    """The object's verification; the test fails here, naming the object, when it has none."""
    assert o.verification is not None, f"{o.object_id} has no verification"
    return o.verification
