from greet import greeting
from users import get_user

print(greeting(1))
print(get_user(2))
