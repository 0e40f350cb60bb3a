"""Python sources of the two tools the tests attach to agents: one free, one that needs approval."""

DICE_SOURCE = '''
def roll_dice(num_sides: int) -> str:
    """Roll a die.

    Args:
        num_sides: How many sides the die has.
    """
    return str(num_sides)
'''

SECRET_SOURCE = '''
def get_secret_code(input_text: str) -> str:
    """Return the secret code for a text.

    Args:
        input_text: The text to encode.
    """
    return "code-" + input_text
'''
