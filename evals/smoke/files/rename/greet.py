from users import get_user


def greeting(user_id):
    return "hello, " + get_user(user_id)
