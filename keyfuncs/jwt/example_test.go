package jwt_test
