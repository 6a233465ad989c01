"""Reading surfaces: everything here reads sealed rows; nothing re-decides an outcome."""
