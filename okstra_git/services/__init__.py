"""Services: the operations of okstra, composed from the git layer, records and pure logic."""
